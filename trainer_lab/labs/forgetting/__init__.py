"""forgetting: fine-tune a model pretrained on task A on a shifted task B; what is left of A
after a high LR, a low LR, LoRA and replay."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="forgetting",
    group="correctness",
    summary=(
        "Catastrophic forgetting and learning-rate sensitivity. An MLP is pretrained in the lab "
        "on task A (4-way classification), then fine-tuned on a shifted task B (other features "
        "active, another rule) from the same weights: full fine-tuning at a high and a low LR, "
        "LoRA (rank r, base frozen) at the high LR, and the high LR with a share of every batch "
        "replayed from A. Accuracy on A's held-out data before and after, and on B. Forgetting "
        "less here comes with learning B less (LoRA, low LR), except with replay."
    ),
    params=(
        ParamSpec("pretrain_steps", "int", 300, "Adam steps on task A", minimum=20, maximum=5000),
        ParamSpec("steps", "int", 150, "fine-tuning steps on task B", minimum=10, maximum=5000),
        ParamSpec("shift", "float", 2.0, "offset of task B's active features"),
        ParamSpec("high_lr", "float", 1e-2, "the high Adam LR", minimum=0.0),
        ParamSpec("low_lr", "float", 1e-3, "the low Adam LR", minimum=0.0),
        ParamSpec("rank", "int", 1, "LoRA rank", minimum=1, maximum=128),
        ParamSpec(
            "replay_share", "float", 0.25, "share of a batch from A", minimum=0.0, maximum=0.9
        ),
        ParamSpec("seed", "int", 0, "data and init seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_shift fine-tunes on task A itself; low_lr_is_high runs the low-LR variant "
            "at the high LR; lora_unfrozen_base leaves the base weights trainable under LoRA; "
            "replay_from_b draws the replayed share from B instead of A",
            choices=("none", "no_shift", "low_lr_is_high", "lora_unfrozen_base", "replay_from_b"),
        ),
    ),
    observations=(
        ObservationSpec("pretrained.acc_a", "accuracy on A after pretraining"),
        ObservationSpec("pretrained.acc_b", "accuracy on B before fine-tuning"),
        ObservationSpec("variants.*", "one fine-tuning variant"),
        ObservationSpec("variants.*.lr", "the variant's learning rate", derived=True),
        ObservationSpec("variants.*.trainable_params", "its trainable parameters", derived=True),
        ObservationSpec(
            "variants.*.*",
            "variants.<full_high_lr|full_low_lr|lora|replay>.<acc_a|acc_b|forgetting|lr|"
            "trainable_params>; forgetting = pretrained acc_a - acc_a",
        ),
    ),
    checks=(
        CheckSpec("high_lr_forgets", "full fine-tuning at the high LR loses >= 0.4 of A accuracy"),
        CheckSpec("low_lr_forgets_less", "the low LR keeps >= 0.3 more of A and still learns B"),
        CheckSpec("lora_forgets_less", "LoRA at the same LR keeps >= 0.1 more of A, learns B"),
        CheckSpec("replay_forgets_less", "replaying A keeps >= 0.3 more of A, learns B as well"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=180.0,
)

"""forgetting: fine-tune a model pretrained on task A on a shifted task B; what is left of A
after a high LR, a low LR, LoRA and replay."""

from __future__ import annotations

from typing import Any

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.context import LabContext, LabError

VARIANTS = ("full_high_lr", "full_low_lr", "lora", "replay")

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


def _row(name: str, v: dict[str, Any]) -> str:
    return f"{name} (lr {v['lr']:g}): A {v['acc_a']:.3f}, B {v['acc_b']:.3f}"


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch("trainer_lab.labs.forgetting.worker:main", {**p, "collective_timeout_s": 170})
    found = run.report("forgetting")
    before, v = found["pretrained"], found["variants"]
    if set(v) != set(VARIANTS):
        raise LabError(f"the worker reported variants {sorted(v)}")
    run.observe("pretrained", before)
    run.observe("variants", v)
    high, low, lora, replay = (v[name] for name in VARIANTS)
    start = f"pretrained: A {before['acc_a']:.3f}, B {before['acc_b']:.3f}"
    run.check(
        "high_lr_forgets",
        high["forgetting"] >= 0.4,
        f"{start}; {_row('full fine-tuning', high)} (forgot {high['forgetting']:.3f})",
    )
    run.check(
        "low_lr_forgets_less",
        low["forgetting"] <= high["forgetting"] - 0.3 and low["acc_b"] >= before["acc_b"] + 0.2,
        f"{_row('full fine-tuning', low)} vs {_row('full fine-tuning', high)}",
    )
    run.check(
        "lora_forgets_less",
        lora["forgetting"] <= high["forgetting"] - 0.1 and lora["acc_b"] >= before["acc_b"] + 0.15,
        f"{_row('LoRA', lora)} with {lora['trainable_params']:,} trainable parameters vs "
        f"{_row('full fine-tuning', high)} with {high['trainable_params']:,}",
    )
    run.check(
        "replay_forgets_less",
        replay["forgetting"] <= high["forgetting"] - 0.3 and replay["acc_b"] >= high["acc_b"] - 0.1,
        f"{_row('replay of ' + format(p['replay_share'], '.0%') + ' A', replay)} vs "
        f"{_row('no replay', high)}",
    )

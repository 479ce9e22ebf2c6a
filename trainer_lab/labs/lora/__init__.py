"""lora: LoRA via torch.nn.utils.parametrize vs full fine-tuning: parameters, gradient and
optimizer bytes, step time, zero-init identity, frozen base, merged weights."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="lora",
    group="performance",
    summary=(
        "LoRA written with torch.nn.utils.parametrize (W + alpha/r * B A on every Linear, B "
        "zero-initialised, base frozen) against full fine-tuning of the same 560 k-parameter "
        "MLP. Measured: trainable parameters, gradient and Adam-state bytes, median step time "
        "(wall clock, an observation only: the parametrization recomputes W + BA every forward, "
        "and on this small CPU model a LoRA step was no faster than a full one, 1.0-1.45x), "
        "outputs at step 0, base weights after training, and "
        "the merged model "
        "(parametrization removed, the update baked into W) against the adapted one."
    ),
    params=(
        ParamSpec("steps", "int", 40, "fine-tuning steps per run", minimum=5, maximum=1000),
        ParamSpec("rank", "int", 8, "LoRA rank r", minimum=1, maximum=256),
        ParamSpec("alpha", "float", 16.0, "LoRA alpha (the update is scaled by alpha / r)"),
        ParamSpec("full_lr", "float", 1e-3, "Adam LR for full fine-tuning", minimum=0.0),
        ParamSpec("lora_lr", "float", 1e-2, "Adam LR for the adapters", minimum=0.0),
        ParamSpec("seed", "int", 0, "init and data seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: unfrozen_base leaves W and the bias trainable; random_b_init starts B "
            "random instead of zero; merge_unscaled merges W + B A without alpha / r",
            choices=("none", "unfrozen_base", "random_b_init", "merge_unscaled"),
        ),
    ),
    observations=(
        ObservationSpec("full", "full fine-tuning"),
        ObservationSpec("lora", "LoRA fine-tuning"),
        ObservationSpec(
            "*.params", "parameters in the model (LoRA: base + adapters)", derived=True
        ),
        ObservationSpec("*.trainable_params", "parameters with requires_grad"),
        ObservationSpec("*.trainable_tensors", "trainable tensors"),
        ObservationSpec("*.grad_bytes", "bytes of .grad after backward", "B"),
        ObservationSpec("*.optimizer_state_bytes", "bytes of Adam state after a step", "B"),
        ObservationSpec("*.step_seconds", "median step time", "s"),
        ObservationSpec("*.first_loss", "loss at the first step"),
        ObservationSpec("*.final_loss", "loss at the last step"),
        ObservationSpec("*.train_accuracy", "accuracy on the fine-tuning data after training"),
        ObservationSpec("adapter_rank", "LoRA rank r", derived=True),
        ObservationSpec("alpha", "LoRA alpha", derived=True),
        ObservationSpec(
            "adapter_params_formula", "r x (in + out) summed over adapted Linears", derived=True
        ),
        ObservationSpec("adapted_linears", "Linear layers with an adapter", derived=True),
        ObservationSpec("zero_init_max_abs_diff", "adapted vs base output before training"),
        ObservationSpec("base_changed_elements", "base weight/bias elements changed by LoRA"),
        ObservationSpec("merged_max_abs_diff", "merged vs adapted model output"),
        ObservationSpec("merged_rel_diff", "the same, relative to the largest output"),
        ObservationSpec("adapted_vs_base_max_abs_diff", "how far LoRA moved the outputs"),
        ObservationSpec("merged_is_plain", "no parametrization left after the merge"),
        ObservationSpec(
            "trainable_fraction", "LoRA trainable / full trainable parameters", derived=True
        ),
        ObservationSpec("optimizer_state_ratio", "LoRA / full Adam-state bytes"),
        ObservationSpec("grad_bytes_ratio", "LoRA / full gradient bytes"),
        ObservationSpec("step_time_ratio", "LoRA / full median step time (wall clock)"),
    ),
    checks=(
        CheckSpec("lora_trains_only_adapters", "trainable = r (in + out) per Linear, < 10 %"),
        CheckSpec("optimizer_state_only_for_adapters", "Adam state = 8 B x adapter params"),
        CheckSpec("base_weights_untouched", "no base weight or bias changed"),
        CheckSpec("zero_init_keeps_base_outputs", "B = 0: the adapted model equals the base"),
        CheckSpec("merged_matches_adapted", "merged weights give the adapted outputs"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=180.0,
)

"""lora: LoRA via torch.nn.utils.parametrize vs full fine-tuning: parameters, gradient and
optimizer bytes, step time, zero-init identity, frozen base, merged weights."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.context import LabContext

ADAM_BYTES_PER_PARAM, STEP_BYTES = 8, 4  # fp32 exp_avg + exp_avg_sq; one fp32 step per tensor

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
        ObservationSpec("*.params", "parameters in the model (LoRA: base + adapters)"),
        ObservationSpec("*.trainable_params", "parameters with requires_grad"),
        ObservationSpec("*.trainable_tensors", "trainable tensors"),
        ObservationSpec("*.grad_bytes", "bytes of .grad after backward", "B"),
        ObservationSpec("*.optimizer_state_bytes", "bytes of Adam state after a step", "B"),
        ObservationSpec("*.step_seconds", "median step time", "s"),
        ObservationSpec("*.first_loss", "loss at the first step"),
        ObservationSpec("*.final_loss", "loss at the last step"),
        ObservationSpec("*.train_accuracy", "accuracy on the fine-tuning data after training"),
        ObservationSpec("adapter_rank", "LoRA rank r"),
        ObservationSpec("alpha", "LoRA alpha"),
        ObservationSpec("adapter_params_formula", "r x (in + out) summed over adapted Linears"),
        ObservationSpec("adapted_linears", "Linear layers with an adapter"),
        ObservationSpec("zero_init_max_abs_diff", "adapted vs base output before training"),
        ObservationSpec("base_changed_elements", "base weight/bias elements changed by LoRA"),
        ObservationSpec("merged_max_abs_diff", "merged vs adapted model output"),
        ObservationSpec("merged_rel_diff", "the same, relative to the largest output"),
        ObservationSpec("adapted_vs_base_max_abs_diff", "how far LoRA moved the outputs"),
        ObservationSpec("merged_is_plain", "no parametrization left after the merge"),
        ObservationSpec("trainable_fraction", "LoRA trainable / full trainable parameters"),
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


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch("trainer_lab.labs.lora.worker:main", {**p, "collective_timeout_s": 170})
    r = run.report("lora")
    for key, value in r.items():
        run.observe(key, value)
    full, lora = r["full"], r["lora"]
    fraction = round(lora["trainable_params"] / full["trainable_params"], 5)
    run.observe("trainable_fraction", fraction)
    run.observe(
        "optimizer_state_ratio",
        round(lora["optimizer_state_bytes"] / full["optimizer_state_bytes"], 5),
    )
    run.observe("grad_bytes_ratio", round(lora["grad_bytes"] / full["grad_bytes"], 5))
    run.observe("step_time_ratio", round(lora["step_seconds"] / full["step_seconds"], 3))
    run.check(
        "lora_trains_only_adapters",
        lora["trainable_params"] == r["adapter_params_formula"] and fraction < 0.1,
        f"LoRA r={r['adapter_rank']}: {lora['trainable_params']:,} trainable of {lora['params']:,} "
        f"({fraction:.2%} of full fine-tuning's {full['trainable_params']:,}); r x (in + out) "
        f"over {r['adapted_linears']} Linears = {r['adapter_params_formula']:,}",
    )
    adam = ADAM_BYTES_PER_PARAM * lora["trainable_params"] + STEP_BYTES * lora["trainable_tensors"]
    run.check(
        "optimizer_state_only_for_adapters",
        lora["optimizer_state_bytes"] == adam
        and lora["optimizer_state_bytes"] <= 0.1 * full["optimizer_state_bytes"],
        f"Adam state: LoRA {lora['optimizer_state_bytes']:,} B, full "
        f"{full['optimizer_state_bytes']:,} B; gradients: LoRA {lora['grad_bytes']:,} B, full "
        f"{full['grad_bytes']:,} B; median step {1e3 * lora['step_seconds']:.1f} ms vs "
        f"{1e3 * full['step_seconds']:.1f} ms",
    )
    run.check(
        "base_weights_untouched",
        r["base_changed_elements"] == 0,
        f"{r['base_changed_elements']:,} base weight/bias elements changed during LoRA training",
    )
    run.check(
        "zero_init_keeps_base_outputs",
        r["zero_init_max_abs_diff"] == 0,
        f"before training, adapted vs base output: max abs diff {r['zero_init_max_abs_diff']:.3g}",
    )
    run.check(
        "merged_matches_adapted",
        r["merged_rel_diff"] <= 1e-5
        and r["merged_is_plain"]
        and r["adapted_vs_base_max_abs_diff"] > 1e-2,
        f"merged vs adapted output: max abs diff {r['merged_max_abs_diff']:.3g} (relative "
        f"{r['merged_rel_diff']:.2e}); training moved the outputs by up to "
        f"{r['adapted_vs_base_max_abs_diff']:.3g}; parametrizations left: "
        f"{not r['merged_is_plain']}",
    )

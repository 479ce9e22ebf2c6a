"""lora lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from trainer_lab.context import LabContext

ADAM_BYTES_PER_PARAM, STEP_BYTES = 8, 4  # fp32 exp_avg + exp_avg_sq; one fp32 step per tensor


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

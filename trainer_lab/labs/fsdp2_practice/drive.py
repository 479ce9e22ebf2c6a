"""fsdp2-practice lab: the driver (torch-free)."""

from __future__ import annotations

from trainer_lab.context import LabContext

# A gloo/CPU lab on any machine: its collectives use CPU tensors, and the numbers it reports
# should not change with the hardware it happens to run on.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}

GRAD_TOLERANCE = 1e-6


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.fsdp2_practice.worker:main",
        {**run.params, "collective_timeout_s": 60},
        env=CPU_ONLY,
    )
    r = run.report("fsdp2_practice")
    no_sync, every = r["accum"]["no_sync"], r["accum"]["every_micro"]
    saved = 1 - no_sync["reduce_scatters"] / every["reduce_scatters"]
    diff = no_sync["max_grad_diff"]
    match = diff <= GRAD_TOLERANCE
    run.observe("accum.no_sync_reduce_scatters", no_sync["reduce_scatters"])
    run.observe("accum.every_micro_reduce_scatters", every["reduce_scatters"])
    run.observe("accum.saved_fraction", round(saved, 4))
    run.observe("accum.max_grad_diff", diff if diff != float("inf") else None)
    run.observe("accum.grads_match_reference", match)
    run.check(
        "accumulation_syncs_once",
        saved > 0 and match,
        f"{run.params['micro_steps']} micro-batches: {no_sync['reduce_scatters']} "
        f"reduce-scatters with sync off until the last, {every['reduce_scatters']} with sync "
        f"on; gradients vs one process: max diff {diff:.2e}",
    )
    mp = r["mp"]
    for key, value in mp.items():
        run.observe(f"mp.{key}", value)
    run.check(
        "mp_computes_in_bf16_keeps_fp32",
        mp["compute_dtype"] == "bfloat16"
        and mp["reduce_dtype"] == "float32"
        and mp["sharded_param_dtype"] == "float32"
        and mp["grad_dtype"] == "float32",
        f"inside forward the weight is {mp['compute_dtype']} (input {mp['input_dtype']}); "
        f"the reduce-scatter sends {mp['reduce_dtype']}; "
        f"the shard keeps {mp['sharded_param_dtype']}, its gradient is {mp['grad_dtype']}",
    )
    reset, broadcast = r["meta"]["reset"], r["meta"]["broadcast"]
    for key, value in reset.items():
        run.observe(f"meta.reset.{key}", round(value, 4) if isinstance(value, float) else value)
    for key, value in broadcast.items():
        run.observe(f"meta.broadcast.{key}", value)
    ratio = reset["weight_std_ratio"]
    run.check(
        "meta_reset_initialises",
        reset["all_finite"]
        and ratio is not None
        and 0.75 <= ratio <= 1.33
        and reset["on_meta"] == 0,
        f"after to_empty + reset_parameters: std {ratio if ratio is None else round(ratio, 3)}x "
        f"kaiming's, finite {reset['all_finite']}, {reset['on_meta']} parameters on meta; "
        f"shards identical {reset['shards_identical']} (DTensor RNG on this mesh: "
        f"{reset['dtensor_rng']})",
    )
    run.check(
        "meta_broadcast_equals_one_process",
        broadcast["matches_single_process"] and not broadcast["shards_identical"],
        f"rank 0's full state dict broadcast into the shards: equals one process's init "
        f"{broadcast['matches_single_process']}, shards identical {broadcast['shards_identical']}",
    )

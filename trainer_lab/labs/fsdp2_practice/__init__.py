"""fsdp2-practice: set_requires_gradient_sync, MixedPrecisionPolicy dtypes, meta-device init."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="fsdp2-practice",
    group="correctness",
    summary=(
        "FSDP2 (fully_shard per block, then the root) on a CPU mesh, three everyday uses. "
        "Gradient accumulation: set_requires_gradient_sync(False) on all but the last "
        "micro-batch (FSDP2 has no no_sync()); reduce-scatters are counted and the gradients "
        "compared with one process on the same micro-batches. MixedPrecisionPolicy(bf16 params, "
        "fp32 reduce): the dtypes seen inside forward, of the reduce-scatter, and kept in the "
        "shards (and the reduce-scatter's dtype with param_dtype alone). Meta-device init: "
        "build on meta, shard, to_empty, reset_parameters; the weights' spread and whether "
        "shards differ."
    ),
    params=(
        ParamSpec(
            "micro_steps", "int", 4, "micro-batches per optimizer step", minimum=2, maximum=16
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: sync_every_micro keeps gradient sync on; never_resync never turns it back "
            "on; no_mp_policy shards without a MixedPrecisionPolicy; bf16_model casts the "
            "model to bf16 before sharding it; reduce_bf16 sets reduce_dtype=bf16; skip_reset "
            "leaves "
            "to_empty's memory as it is; broadcast_off has every rank copy its rows out of a "
            "model of its own drawing",
            choices=(
                "none",
                "sync_every_micro",
                "never_resync",
                "no_mp_policy",
                "bf16_model",
                "reduce_bf16",
                "skip_reset",
                "broadcast_off",
            ),
        ),
    ),
    observations=(
        ObservationSpec("accum.no_sync_reduce_scatters", "reduce-scatters in the step, sync off"),
        ObservationSpec("accum.every_micro_reduce_scatters", "reduce-scatters, sync always on"),
        ObservationSpec("accum.saved_fraction", "1 - no_sync / every_micro reduce-scatters"),
        ObservationSpec("accum.max_grad_diff", "sharded grads vs one process (sync off)"),
        ObservationSpec("accum.grads_match_reference", "max_grad_diff <= 1e-6 (bool)"),
        ObservationSpec("mp.compute_dtype", "weight dtype inside forward"),
        ObservationSpec("mp.input_dtype", "a block's input dtype inside forward"),
        ObservationSpec("mp.output_dtype", "the model output's dtype"),
        ObservationSpec("mp.sharded_param_dtype", "dtype of the sharded parameter kept"),
        ObservationSpec("mp.grad_dtype", "dtype of the sharded gradient"),
        ObservationSpec("mp.reduce_dtype", "dtype of the reduce-scatter's input tensor"),
        ObservationSpec("mp.unset_reduce_dtype", "the same with param_dtype bf16 alone"),
        ObservationSpec("mp.unset_grad_dtype", "sharded gradient's dtype, param_dtype alone"),
        ObservationSpec("meta.reset.weight_std_ratio", "std of a reset weight / kaiming's"),
        ObservationSpec("meta.reset.all_finite", "every reset value finite (bool)"),
        ObservationSpec("meta.reset.shards_identical", "ranks 0 and 1 hold the same values"),
        ObservationSpec(
            "meta.reset.dtensor_rng", "DTensor's offset RNG runs on this mesh", derived=True
        ),
        ObservationSpec("meta.reset.on_meta", "parameters still on the meta device"),
        ObservationSpec("meta.broadcast.matches_single_process", "== one process's init (bool)"),
        ObservationSpec("meta.broadcast.shards_identical", "ranks 0 and 1 hold the same values"),
    ),
    checks=(
        CheckSpec("accumulation_syncs_once", "sync off: fewer reduce-scatters, same grads"),
        CheckSpec(
            "mp_computes_in_bf16_keeps_fp32",
            "bf16 inside forward, fp32 reduce-scatter, fp32 shards and grads",
        ),
        CheckSpec("meta_reset_initialises", "reset_parameters after to_empty: kaiming's spread"),
        CheckSpec("meta_broadcast_equals_one_process", "rank 0's full init lands in the shards"),
    ),
    timeout_s=120.0,
)

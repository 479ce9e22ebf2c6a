"""reshard: a DCP sharded checkpoint saved at world size W loads at other world sizes with every
tensor identical; resuming the data from the global samples-consumed offset keeps exactly-once,
resuming each rank's own counter duplicates or skips samples."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="reshard",
    group="correctness",
    summary=(
        "Train FSDP2 at world size W, save a DCP sharded checkpoint (model + Adam state), load "
        "it at other world sizes (default 1 and 3): every tensor is identical. The global batch "
        "stays, the per-rank batch and partition change; resuming the sampler from the global "
        "samples-consumed offset keeps exactly-once, per-rank counters duplicate or skip."
    ),
    params=(
        ParamSpec("load_world_sizes", "str", "1,3", "comma-separated world sizes to load at"),
        ParamSpec("steps", "int", 3, "steps before the save", minimum=1, maximum=50),
        ParamSpec(
            "load_state",
            "bool",
            True,
            "debug: false skips dcp.load (fresh weights), so the tensor check must fail",
        ),
        ParamSpec(
            "resume_offset",
            "choice",
            "global",
            "the data position the exactly-once check judges. global: samples consumed by all "
            "ranks; debug per_rank: each rank's own counter, so the check must fail",
            choices=("global", "per_rank"),
        ),
    ),
    observations=(
        ObservationSpec("save_world_size", "world size of the save"),
        ObservationSpec("global_batch", "global batch (unchanged by resharding)"),
        ObservationSpec("global_consumed", "samples consumed by all ranks before the save"),
        ObservationSpec("tensors", "tensors in the checkpoint (model + optimizer)"),
        ObservationSpec("checkpoint_files", "files DCP wrote"),
        ObservationSpec("loads.w*.tensors_identical", "every full tensor equal after load"),
        ObservationSpec("loads.w*.differing_tensors", "tensors whose bytes changed"),
        ObservationSpec("loads.w*.per_rank_batch", "per-rank batch at that world size"),
        ObservationSpec("loads.w*.global.duplicates", "samples seen twice this epoch (global)"),
        ObservationSpec("loads.w*.global.skipped", "samples never seen this epoch (global)"),
        ObservationSpec("loads.w*.per_rank.duplicates", "samples seen twice (per-rank counters)"),
        ObservationSpec("loads.w*.per_rank.skipped", "samples never seen (per-rank counters)"),
    ),
    checks=(
        CheckSpec("tensors_identical_after_load", "every tensor equal at every load world size"),
        CheckSpec("exactly_once", "resumed data: no duplicate, no skipped sample"),
        CheckSpec("per_rank_counters_break", "per-rank counters duplicate or skip samples"),
    ),
    timeout_s=120.0,
)

"""ddp-buckets: how many gradient buckets DDP all-reduces per iteration, and when."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

MODES = ("default", "find_unused")

SPEC = LabSpec(
    name="ddp-buckets",
    group="correctness",
    summary=(
        "Wraps a stack of Linear layers in a fresh DDP twice, with find_unused_parameters "
        "False (the default) and True, and counts the buckets a comm hook is handed in each "
        "iteration: their sizes, which layers they hold, and how many gradients were ready "
        "when each was launched (a bucket launched before the last one overlaps backward). "
        "With the default DDP all-reduces everything in one bucket at the end of the first "
        "backward, then rebuilds the buckets in the order gradients became ready; with "
        "find_unused_parameters=True it buckets in reverse registration order from the start."
    ),
    params=(
        ParamSpec("layers", "int", 8, "Linear layers in the stack", minimum=2, maximum=32),
        ParamSpec("width", "int", 256, "features per layer", minimum=8, maximum=1024),
        ParamSpec(
            "bucket_cap_mb", "float", 0.3, "DDP's bucket_cap_mb", minimum=0.01, maximum=1000.0
        ),
        ParamSpec("iterations", "int", 4, "iterations per mode", minimum=2, maximum=20),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: swap_modes passes the opposite find_unused_parameters to each mode; "
            "one_bucket sets bucket_cap_mb so large that every gradient fits one bucket",
            choices=("none", "swap_modes", "one_bucket"),
        ),
    ),
    observations=tuple(
        spec
        for mode in MODES
        for spec in (
            ObservationSpec(f"{mode}.buckets_per_iteration", "buckets launched, per iteration"),
            ObservationSpec(f"{mode}.first_buckets", "buckets in the first iteration"),
            ObservationSpec(f"{mode}.later_buckets", "buckets in the last iteration"),
            ObservationSpec(
                f"{mode}.first_overlapped",
                "first-iteration buckets launched before the last gradient was ready",
            ),
            ObservationSpec(
                f"{mode}.later_overlapped",
                "last-iteration buckets launched before the last gradient was ready",
            ),
            ObservationSpec(
                f"{mode}.first_bucket_share",
                "share of all gradient elements in the first bucket launched in iteration 0",
            ),
            ObservationSpec(
                f"{mode}.first_launch_layers",
                "layers whose gradients the first bucket of iteration 0 holds",
            ),
            ObservationSpec(
                f"{mode}.later_launch_layers",
                "layers whose gradients the first bucket of the last iteration holds",
            ),
            ObservationSpec(
                f"{mode}.layout_changed",
                "the bucket layout of the last iteration differs from the first (bool)",
            ),
        )
    ),
    checks=(
        CheckSpec(
            "default_first_iteration_one_bucket",
            "find_unused_parameters=False: iteration 0 all-reduces every gradient in one "
            "bucket, launched after the last gradient (no overlap)",
        ),
        CheckSpec(
            "default_rebuilds_in_ready_order",
            "find_unused_parameters=False: later iterations use several buckets, the first "
            "holding the last layer, launched while backward still runs",
        ),
        CheckSpec(
            "find_unused_keeps_reverse_order",
            "find_unused_parameters=True: several buckets from iteration 0, last layer "
            "first, the same layout in every iteration",
        ),
    ),
    timeout_s=90.0,
)

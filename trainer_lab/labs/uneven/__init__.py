"""uneven: ranks with different numbers of batches. Without Join the run fails (a timeout in
the extra gradient all-reduce); with DDP's Join it completes and the weights are equal."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="uneven",
    group="failures",
    summary=(
        "Rank 0 has more batches than the others. Without Join the job fails: rank 0 waits in "
        "a gradient all-reduce nobody else joins, until the collective timeout. With DDP's "
        "Join the early ranks shadow the all-reduces, the job completes and every rank ends "
        "with the same weights."
    ),
    params=(
        ParamSpec("batches", "int", 4, "batches on every rank but rank 0", minimum=1, maximum=50),
        ParamSpec(
            "extra_batches",
            "int",
            2,
            "extra batches on rank 0 (0 makes the inputs even: the no-Join run then succeeds "
            "and its check fails)",
            minimum=0,
            maximum=50,
        ),
        ParamSpec(
            "collective_timeout_s", "float", 3.0, "process-group timeout", minimum=1, maximum=60
        ),
        ParamSpec(
            "join",
            "bool",
            True,
            "debug: false runs the 'with Join' launch without Join, so its checks must fail",
        ),
    ),
    observations=(
        ObservationSpec("batches_per_rank", "batches each rank had"),
        ObservationSpec("join.completed", "the Join launch finished (bool)"),
        ObservationSpec("join.steps_per_rank", "optimizer steps each rank ran with Join"),
        ObservationSpec("join.weights_equal", "final weights bit-identical on all ranks"),
        ObservationSpec("duration_s", "wall time of the launches", "s"),
        ObservationSpec("nojoin.failed", "the launch without Join failed (bool)"),
        ObservationSpec("nojoin.error", "first error without Join"),
        ObservationSpec("nojoin.seconds_to_failure", "last step -> failure, rank 0", "s"),
    ),
    checks=(
        CheckSpec("without_join_fails", "no Join: the run fails or times out"),
        CheckSpec("with_join_completes", "Join: every rank finishes its own batches"),
        CheckSpec("with_join_weights_equal", "Join: the final weights are equal on every rank"),
    ),
    timeout_s=90.0,
)

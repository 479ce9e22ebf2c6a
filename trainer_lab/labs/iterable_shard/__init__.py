"""iterable-shard: an IterableDataset split per rank and per DataLoader worker, or duplicated."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

VARIANTS = ("naive", "rank_only", "fixed")

SPEC = LabSpec(
    name="iterable-shard",
    group="correctness",
    summary=(
        "A stream of sample ids read as an IterableDataset by a DataLoader with worker "
        "processes on every rank, three ways: not split at all (every worker of every rank "
        "yields the whole stream), split by rank only (each rank's workers repeat its shard), "
        "and split by rank and by get_worker_info() (each id once). The ids every rank's "
        "loader actually yielded are gathered and counted."
    ),
    params=(
        ParamSpec("samples", "int", 60, "ids in the stream", minimum=12, maximum=5000),
        ParamSpec(
            "num_workers", "int", 2, "DataLoader worker processes per rank", minimum=1, maximum=4
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_worker_split leaves get_worker_info() out of the fixed split; "
            "in_process builds every loader with num_workers=0",
            choices=("none", "no_worker_split", "in_process"),
        ),
    ),
    observations=(
        ObservationSpec("*.yielded", "ids yielded over all ranks and workers"),
        ObservationSpec("*.distinct", "distinct ids yielded"),
        ObservationSpec("*.duplicates", "yields beyond the first of each id"),
        ObservationSpec("*.missing", "ids of the stream never yielded"),
        ObservationSpec("*.max_copies", "most copies of one id"),
        ObservationSpec("*.copies_per_id", "copies of every id, when all ids have the same count"),
        ObservationSpec("*.copies_equal_ranks_times_workers", "every id W x workers times (bool)"),
        ObservationSpec("*.copies_equal_workers", "every id num_workers times (bool)"),
        ObservationSpec("workers_seen", "distinct (rank, worker id) pairs that yielded ids"),
    ),
    checks=(
        CheckSpec("fixed_exactly_once", "split by rank and worker: every id exactly once"),
        CheckSpec("naive_duplicates_everywhere", "not split: every id W x workers times"),
        CheckSpec("rank_only_duplicates_per_worker", "rank split only: every id workers times"),
    ),
    timeout_s=90.0,
)

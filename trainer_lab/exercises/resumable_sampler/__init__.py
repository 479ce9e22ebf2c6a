from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="resumable-sampler",
    title="Resume a sharded loader mid-epoch",
    topic="data loading",
    summary="ResumableLoader(dataset, batch_size): this rank's batches of an epoch, with "
    "state_dict() / load_state_dict() so that a loader restored after a restart at step K "
    "continues with exactly the samples not yet seen: no replay, no skip. set_epoch(e) "
    "starts epoch e from its beginning, also on a loader that lives across epochs.",
    file="resumable.py",
    checks=(
        (
            "matches_uninterrupted",
            "each rank's ids across the interrupted and resumed epoch "
            "equal an uninterrupted epoch's, in order",
        ),
        ("no_replay", "no id is seen twice across the interrupted and resumed epoch"),
        ("no_skip", "every id of the epoch is seen by some rank"),
        (
            "next_epoch",
            "set_epoch on a loader that lives on (after a full, a resumed, or an abandoned "
            "epoch) starts the new epoch from its beginning",
        ),
    ),
    hints=(
        "DistributedSampler(dataset, shuffle=True, seed=...) with set_epoch(epoch) gives the "
        "same per-rank order in a new process: the position is all the state there is.",
        "Count the samples this rank has been handed in the current epoch; save it with the "
        "epoch, and on resume iterate the sampler's indices from that count on.",
        "The count is per rank: the sampler's indices are already this rank's slice, so skip "
        "exactly that many of them (not the count of all ranks together).",
    ),
)

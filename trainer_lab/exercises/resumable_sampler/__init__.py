from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="resumable-sampler",
    title="Resume a sharded loader mid-epoch",
    topic="data loading",
    summary="ResumableLoader(dataset, batch_size): this rank's batches of an epoch, with "
    "state_dict() / load_state_dict() so that a loader restored after a restart at step K "
    "continues with exactly the samples not yet seen: no replay, no skip. set_epoch(e) "
    "starts epoch e from its beginning, also on a loader that lives across epochs. Each "
    "epoch is a new shuffle (the order depends on the seed and the epoch), batches hold "
    "batch_size ids (an epoch's last may hold fewer), and a new loader never given set_epoch "
    "is at the start of epoch 0 and saves and resumes like any other.",
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
        ("new_order", "epoch 2 visits this rank's ids in another order than epoch 1"),
        (
            "batch_shape",
            "every batch holds batch_size ids, except an epoch's last, which may hold fewer",
        ),
        (
            "resume_without_set_epoch",
            "a loader never given set_epoch (epoch 0) stopped at step K, saved and resumed "
            "gives the same ids as one given set_epoch(0)",
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

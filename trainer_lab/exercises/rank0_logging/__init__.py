from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="rank0-logging",
    title="Log the mean loss on rank 0 without deadlocking",
    topic="collectives",
    summary="Write report(step, loss): print 'step S loss L' once, on rank 0, where L is the "
    "mean of the ranks' losses. Every rank calls report; the caller keeps using its loss.",
    file="report.py",
    checks=(
        ("no_hang", "report returns on every rank (a collective no peer joins times out in 4 s)"),
        (
            "rank0_only",
            "rank 0 (the global rank) prints one line per step; the other ranks print nothing, "
            "also when each rank runs on a node of its own (LOCAL_RANK is 0 on every node)",
        ),
        ("mean_over_ranks", "the printed loss is the mean over ranks, not rank 0's own"),
        ("loss_unchanged", "report leaves the caller's loss tensor as it was"),
    ),
    hints=(
        "A collective (all_reduce) must be called by every rank, or the callers wait forever.",
        "Do the all_reduce on every rank first; only the print goes under `if rank == 0`.",
        "all_reduce sums: divide by dist.get_world_size() for the mean.",
    ),
)

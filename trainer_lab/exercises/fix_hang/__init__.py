from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="fix-hang",
    title="Fix a hang: a collective inside a rank-dependent branch",
    topic="collectives",
    summary="should_stop(local_val_loss, threshold) must return the same answer on every rank: "
    "True when the mean validation loss over the ranks is below threshold. The starter hangs.",
    file="early_stop.py",
    checks=(
        ("no_hang", "should_stop returns on every rank, for every case"),
        ("ranks_agree", "every rank returns the same decision"),
        (
            "uses_the_mean",
            "the decision is mean over ranks < threshold (a mean equal to the threshold is not "
            "below it)",
        ),
    ),
    hints=(
        "Which ranks reach the all_reduce? Only those whose own loss is below the threshold.",
        "Move the collective out of the branch: all ranks all_reduce their loss, then decide.",
    ),
)

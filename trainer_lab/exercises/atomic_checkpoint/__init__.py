from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="atomic-checkpoint",
    title="Commit a checkpoint atomically; never read a torn one",
    topic="checkpointing",
    summary="save(state, ckpt_dir, step) and latest(ckpt_dir): a process killed in the middle "
    "of save must leave the previous checkpoint readable, latest must return the newest "
    "complete one (never a half-written file), and the next save must still work.",
    file="commit.py",
    checks=(
        ("roundtrip", "after saves of steps 8, 9 and 10, latest returns step 10's state"),
        (
            "survives_crash",
            "a save of step 11 killed mid-write (file-size limit, SIGXFSZ), and killed at each "
            "of its file operations (before it, and in the first write after it): latest still "
            "returns a complete state, step 10's until step 11's is committed",
        ),
        (
            "saves_after_crash",
            "after the crash, saving step 11 again works and latest returns it",
        ),
    ),
    hints=(
        "A rename within one directory is atomic (os.replace): write the whole file under a "
        "temporary name, then rename it to its final name. A reader sees the old file or the "
        "new one, never half of one.",
        "latest must only look at committed names (skip the temporary ones), and the committed "
        "ones sort by step: compare step numbers, not strings ('step-10' < 'step-9').",
        "Flush and os.fsync the file before the rename, and never delete the old checkpoint "
        "before the new one is committed. A crash can leave a stale temporary file behind: the "
        "next save must overwrite it, not trip over it.",
    ),
    world_size=0,
)

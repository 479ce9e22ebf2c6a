from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="atomic-checkpoint",
    title="Commit a checkpoint atomically; never read a torn one",
    topic="checkpointing",
    summary="save(state, ckpt_dir, step) and latest(ckpt_dir): a process killed in the middle "
    "of save must leave the previous checkpoint readable, latest must return the newest "
    "complete one (never a half-written file), and the next save must still work. The commit "
    "must also survive a power cut (the data synced before it is committed, the commit (a "
    "rename, or a marker file's creation) made durable by fsyncing its directory), save must "
    "not leak file descriptors, and latest must "
    "return None when there is no checkpoint yet (no directory, an empty one, or only a killed "
    "save's leftovers).",
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
        (
            "durable_commit",
            "a save's syncs (os.fsync, os.fdatasync, os.sync), renames and file creations are "
            "watched: the commit is its last rename, or without one its last new file (a "
            "marker); every file it writes is synced at its full size (flushed first) before the "
            "commit, and the committed name's directory is fsynced after it",
        ),
        ("no_fd_leak", "50 saves leave as many file descriptors open as before"),
        (
            "fresh_start",
            "latest returns None on a directory that does not exist, an empty one, and one that "
            "holds only what a save killed mid-write left behind",
        ),
    ),
    hints=(
        "A rename within one directory is atomic (os.replace): write the whole file under a "
        "temporary name, then rename it to its final name. A reader sees the old file or the "
        "new one, never half of one.",
        "latest must only look at committed names (skip the temporary ones), and the committed "
        "ones sort by step: compare step numbers, not strings ('step-10' < 'step-9').",
        "Flush and os.fsync the file before the rename (a kill keeps what the kernel holds, a "
        "power cut does not), then fsync the directory (os.open it read-only, os.fsync, "
        "os.close) so the rename itself is on disk. Never delete the old checkpoint before the "
        "new one is committed. A crash can leave a stale temporary file behind: the next save "
        "must overwrite it, and latest must return None if that is all there is.",
    ),
    world_size=0,
)

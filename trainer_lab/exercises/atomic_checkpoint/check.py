"""atomic-checkpoint: one process. Saves of steps 8, 9 and 10 (so a string sort of the names,
'step-10' < 'step-9', shows), then a save of step 11 in a forked child whose file-size limit is
half a checkpoint: the write past it raises SIGXFSZ, which kills the child mid-write like a power
cut or an OOM kill would (no except or finally runs). The reader must then still find step 10,
and the next save must still work.

The first write is not the only one that can be torn: a save that writes a temporary file and
then copies it into place, or that updates a pointer file in place, is torn only in its later
writes. So survives_crash also kills the save of step 11 at every point, on a copy of the
directory: before each of its file operations (an open for writing, a rename, a remove, a copy,
a mkdir ... seen through Python's audit hooks), and in the first write after each of them
(the file-size limit armed at that point, at 1 byte and at half a checkpoint). After each kill
latest() must return step 10's complete state, or step 11's once its save was committed.

A kill does not lose what the kernel already holds, so the durability of the commit (against a
power cut) is checked by watching the save, on a fresh directory (watch.py: its syncs, renames
and file creations, however the user's code reached them). The commit is the save's last rename,
or without one its last creation of a new file (a marker). Every non-empty file the save wrote
must have been synced (os.fsync, os.fdatasync or os.sync) at its full size (a short sync means
bytes were still in Python's buffer: no flush) before the commit, and the committed name's
directory synced after it: a rename and a marker's creation alike are lost in a power cut until
their directory is. Then no_fd_leak counts this process's open file descriptors before and
after many saves, and fresh_start calls latest() on a directory that does not exist, an empty
one, and one that holds only what a save killed mid-write left there: each must return None."""

import os
import resource
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import torch

from trainer_lab.exercises._checker.ctx import Ctx, where
from trainer_lab.exercises.atomic_checkpoint.watch import (
    describe,
    files,
    ident_of,
    synced_at,
    syncs_folder,
    watch,
)

SIZE = 256  # a 256x256 float32 tensor: a 256 KiB checkpoint
STEPS = (8, 9, 10)  # saved first; latest must return the last
LAST, NEXT = STEPS[-1], STEPS[-1] + 1
MAX_POINTS = 40  # file operations of one save tried at most
# audit events that change the file system (an "open" counts only when it opens for writing)
MUTATING = {
    "open", "os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.truncate", "os.link",
    "os.symlink", "shutil.copyfile", "shutil.move", "shutil.rmtree", "shutil.copytree",
}  # fmt: skip
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
LEAK_SAVES = 50  # saves counted by no_fd_leak


def _state(step: int, size: int = SIZE) -> dict[str, Any]:
    g = torch.Generator().manual_seed(step)
    return {"step": step, "model": {"w": torch.randn(size, size, generator=g)}}


def _is_state(got: Any, step: int) -> bool:
    try:
        return got["step"] == step and torch.equal(got["model"]["w"], _state(step)["model"]["w"])
    except Exception:
        return False


def _describe(got: Any) -> str:
    if got is None:
        return "None"
    if isinstance(got, dict) and "step" in got:
        return f"the state of step {got['step']}"
    return f"a {type(got).__name__}"


def _listing(ckpt_dir: Path) -> str:
    if not ckpt_dir.is_dir():
        return "nothing (no directory)"
    entries = sorted(ckpt_dir.rglob("*"))
    files = [f"{p.relative_to(ckpt_dir)} ({p.stat().st_size:,} B)" for p in entries if p.is_file()]
    return ", ".join(files) or "no files"


def _outcome(got: Any, error: str | None) -> str:
    return f"raised {error}" if error else f"returned {_describe(got)}"


def _latest(ctx: Ctx, ckpt_dir: Path) -> tuple[Any, str | None]:
    try:
        return ctx.attr("latest")(str(ckpt_dir)), None
    except Exception as error:
        return None, where(error, ctx.user_file)


def _operation(event: str, args: tuple[Any, ...]) -> str | None:
    """A short description of a file-system change, None for an event that changes nothing."""
    if event not in MUTATING:
        return None
    if event == "open":
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        if not flags & WRITE_FLAGS or not isinstance(args[0], str | bytes | os.PathLike):
            return None
        return f"open {os.path.basename(os.fsdecode(args[0]))} for writing"
    names = [os.path.basename(os.fsdecode(a)) for a in args[:2] if isinstance(a, str | bytes)]
    return f"{event} {' -> '.join(names)}".strip()


def _crash_during_save(
    ctx: Ctx, ckpt_dir: Path, limit: int, point: int = 0, kill: bool = False
) -> tuple[str, list[str]]:
    """Run save(step NEXT) in a child that dies at file operation `point` (0: from the start):
    SIGKILLed before it when `kill`, else in the first write past `limit` bytes after it.
    Returns (what went wrong with the experiment, or "" when the child died as planned; the
    file operations the child began, in order). A save with fewer operations than `point`
    finishes: ("finished", its operations)."""
    save = ctx.attr("save")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: die at the point, never return into the checker
        code = 0
        os.close(read_end)
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # python ignores it by default
            hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
            seen = [0]

            def arm() -> None:
                if kill:
                    os.kill(os.getpid(), signal.SIGKILL)
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))

            def hook(event: str, args: tuple[Any, ...]) -> None:
                what = _operation(event, args)
                if what is None:
                    return
                seen[0] += 1
                os.write(write_end, (what + "\n").encode())  # a pipe: no file-size limit
                if seen[0] == point:
                    arm()

            if point == 0:
                arm()
            sys.addaudithook(hook)
            save(_state(NEXT), str(ckpt_dir), NEXT)
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    ops = b"".join(chunks).decode(errors="replace").splitlines()
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXFSZ, signal.SIGKILL):
        return "", ops
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3:
        return f"save() of step {NEXT} raised instead of being killed mid-write", ops
    if point:
        return "finished", ops
    return f"save() of step {NEXT} finished within a {limit:,} B file-size limit (no big file)", ops


def _verdict(ctx: Ctx, ckpt_dir: Path, how: str) -> str:
    """ "" when latest() returns step LAST's or step NEXT's complete state after the crash
    described by `how`, else what was observed, what was expected and the likely cause."""
    got, error = _latest(ctx, ckpt_dir)
    after = _listing(ckpt_dir)
    if error:
        return (
            f"a save of step {NEXT} was killed {how}, then latest() raised {error}: it read the "
            f"torn file. Expected step {LAST}'s complete state (or step {NEXT}'s, if it was "
            f"committed). Likely cause: the checkpoint is written under a name latest() reads "
            f"before the write finished (no atomic commit). The directory holds {after}"
        )
    if got is None:
        return (
            f"a save of step {NEXT} was killed {how}, then latest() returned None: no complete "
            f"checkpoint is left. Expected step {LAST}'s state. Likely cause: the old checkpoint "
            f"(or what points at it) was removed or overwritten before the new one was "
            f"committed. The directory holds {after}"
        )
    if _is_state(got, LAST) or _is_state(got, NEXT):
        return ""
    return (
        f"a save of step {NEXT} was killed {how}, then latest() returned {_describe(got)}, not "
        f"step {LAST}'s complete state (nor step {NEXT}'s). Likely cause: latest() picks a file "
        f"that is not the newest complete one. The directory holds {after}"
    )


def _every_point(ctx: Ctx, ckpt_dir: Path, half: int) -> str:
    """Kill the save of step NEXT at each point, on a copy of `ckpt_dir`; the first failure."""
    pristine = ctx.scratch / "pristine"
    shutil.copytree(ckpt_dir, pristine)
    trial_dir = ctx.scratch / "trial"
    for point in range(1, MAX_POINTS + 1):
        ops: list[str] = []
        for kill, limit in ((True, 0), (False, 1), (False, half)):
            shutil.rmtree(trial_dir, ignore_errors=True)
            shutil.copytree(pristine, trial_dir)
            problem, ops = _crash_during_save(ctx, trial_dir, limit, point, kill)
            if problem == "finished":
                break
            if problem:
                return f"{problem} (killed at its file operation {point})"
            done = "; ".join(ops[: point - 1]) or "nothing"
            how = (
                f"just before its file operation {point} ({ops[point - 1]}), after: {done}"
                if kill
                else f"in its first write past {limit:,} B after its file operation {point} "
                f"({ops[point - 1]}); it had begun: {'; '.join(ops)}"
            )
            failure = _verdict(ctx, trial_dir, how)
            if failure:
                return failure
        if len(ops) < point:
            break
    shutil.rmtree(trial_dir, ignore_errors=True)
    shutil.rmtree(pristine, ignore_errors=True)
    return ""


def _durable_commit(ctx: Ctx) -> tuple[bool, str]:
    """Save a step into a directory that already holds one, watching its syncs and commit."""
    save = ctx.attr("save")
    ckpt_dir = ctx.scratch / "durable"
    step = 2
    try:
        save(_state(1), str(ckpt_dir), 1)
        before = files(ckpt_dir)
        calls: list[dict[str, Any]] = []
        with watch(ctx.user, ckpt_dir, calls):
            save(_state(step), str(ckpt_dir), step)
    except Exception as error:
        return False, f"save() raised {where(error, ctx.user_file)}; cannot watch its commit"
    written = {
        ident: (name, size)
        for ident, (name, size, mtime) in files(ckpt_dir).items()
        if size > 0 and before.get(ident) != (name, size, mtime)
    }
    labels = {ident_of(ckpt_dir.parent): "the checkpoint directory's parent",
              ident_of(ckpt_dir): "the checkpoint directory"}  # fmt: skip
    for c in calls:
        if c.get("dir") and "id" in c:
            c["label"] = labels.get(c["id"], "another directory")
    renames = [i for i, c in enumerate(calls) if c["op"] == "rename"]
    creates = [i for i, c in enumerate(calls) if c["op"] == "create" and not c["existed"]]
    commits = renames or creates  # the last rename commits; without one, the last new file
    commit = commits[-1] if commits else len(calls)
    seen = "; ".join(describe(c) for c in calls) or "no sync, rename or file creation"
    where_commit = f"before the commit ({describe(calls[commit])})" if commits else (
        "before save() returns")  # fmt: skip
    for ident, (name, size) in sorted(written.items(), key=lambda item: item[1]):
        synced = [n for c in calls[:commit] if (n := synced_at(c, ident)) is not None]
        later = [n for c in calls[commit:] if (n := synced_at(c, ident)) is not None]
        if size in synced:
            continue
        if synced:
            return False, (
                f"save() of step {step} synced {name} when it held {max(synced):,} of its "
                f"{size:,} B; expected all of its bytes on disk {where_commit}, so that a power "
                f"cut cannot leave the committed name on a short file. Likely cause: no "
                f"f.flush() before the sync: the rest was still in Python's buffer. It called: "
                f"{seen}"
            )
        if later and commits:
            return False, (
                f"save() of step {step} synced {name} only after the commit "
                f"({describe(calls[commit])}); expected its bytes on disk before it, or a power "
                f"cut in between leaves the committed name on an empty or partial file. Likely "
                f"cause: the fsync comes after the commit instead of before. It called: {seen}"
            )
        return False, (
            f"save() of step {step} wrote {name} ({size:,} B) but never fsynced it; expected it "
            f"flushed and synced (os.fsync / os.fdatasync) {where_commit}: after a power cut the "
            f"committed name can point at an empty or partial file. Likely cause: no f.flush() "
            f"and os.fsync(f.fileno()) before the commit. It called: {seen}"
        )
    if commits:
        last = calls[commit]
        committed = last["dst"] if last["op"] == "rename" else last["path"]
        folder = ident_of(os.path.dirname(committed))
        if not any(syncs_folder(c, folder) for c in calls[commit:]):
            how = "rename" if last["op"] == "rename" else "creation of"
            other = [c for c in calls[commit:] if c.get("dir") and c["op"] != "sync"]
            if other:
                said = f"fsynced {other[0]['label']} after it, not the directory holding it"
                cause = (
                    "the fsync opened another directory than the one the commit changed (say "
                    "os.path.dirname(ckpt_dir), the parent, instead of ckpt_dir itself)"
                )
            elif any(syncs_folder(c, folder) for c in calls[:commit]):
                said = "fsynced the directory only before it"
                cause = "the directory fsync comes before the commit instead of after it"
            else:
                said = "never fsynced the directory after it"
                cause = "no directory fsync after the commit"
            return False, (
                f"save() of step {step} committed with {describe(last)} but {said}; expected "
                f"an os.fsync of the directory (os.open(ckpt_dir, os.O_RDONLY)) after the "
                f"commit: until then the {how} {os.path.basename(committed)} itself can be lost "
                f"in a power cut. Likely cause: {cause}. It called: {seen}"
            )
    names = ", ".join(name for name, _ in written.values())
    return True, (
        f"save() of step {step} syncs the checkpoint's bytes ({names}) before it commits"
        + (f" and syncs its directory after the commit ({describe(calls[commit])})" * bool(commits))
    )


def _open_fds() -> int:
    if os.path.isdir("/proc/self/fd"):
        return len(os.listdir("/proc/self/fd"))
    count = 0
    for fd in range(min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 65536)):
        try:
            os.fstat(fd)
            count += 1
        except OSError:
            pass
    return count


def _no_fd_leak(ctx: Ctx) -> tuple[bool, str]:
    save = ctx.attr("save")
    ckpt_dir = ctx.scratch / "fds"
    try:
        save(_state(0, 8), str(ckpt_dir), 0)  # the first save may open what stays open
        before = _open_fds()
        for step in range(1, LEAK_SAVES + 1):
            save(_state(step, 8), str(ckpt_dir), step)
        after = _open_fds()
    except Exception as error:
        return False, f"save() raised {where(error, ctx.user_file)} during {LEAK_SAVES} saves"
    if after > before:
        return False, (
            f"{LEAK_SAVES} saves left {after - before} more file descriptors open ({before} "
            f"before, {after} after); expected as many as before. Likely cause: a descriptor "
            f"opened in save() with os.open (say, the directory's, for its fsync) is never "
            f"os.close'd: a long run hits 'Too many open files'"
        )
    return True, f"{LEAK_SAVES} saves leave the number of open file descriptors as it was"


def _fresh_start(ctx: Ctx, half: int) -> tuple[bool, str]:
    folders: list[tuple[str, Path]] = [
        ("a directory that does not exist (a fresh job's first start)", ctx.scratch / "never"),
    ]
    empty = ctx.scratch / "empty"
    empty.mkdir(exist_ok=True)
    folders.append(("an empty directory", empty))
    leftover = ctx.scratch / "leftover"
    leftover.mkdir(exist_ok=True)
    problem, _ = _crash_during_save(ctx, leftover, half)
    if not problem and any(leftover.rglob("*")):
        folders.append((f"a directory holding only what a save killed mid-write left "
                        f"({_listing(leftover)})", leftover))  # fmt: skip
    for what, folder in folders:
        got, error = _latest(ctx, folder)
        if error or got is not None:
            cause = (
                "latest() lists or reads the directory without first checking that it exists"
                if not folder.exists()
                else "latest() takes the newest of no committed checkpoints (max() of nothing), "
                "or reads a file that was never committed"
            )
            return False, (
                f"latest() on {what} {_outcome(got, error)}; expected None (no checkpoint yet). "
                f"Likely cause: {cause}"
            )
    return True, (
        "latest() returns None on a missing directory, an empty one"
        + (" and one holding only a killed save's leftovers" if len(folders) == 3 else "")
    )


def run(ctx: Ctx) -> None:
    save = ctx.attr("save")
    ckpt_dir = ctx.scratch / "ckpt"
    for step in STEPS:
        ctx.call(save, _state(step), str(ckpt_dir), step)
    got, error = _latest(ctx, ckpt_dir)
    ok = error is None and _is_state(got, LAST)
    cause = ""
    if not ok and isinstance(got, dict) and got.get("step") in STEPS:
        cause = (
            " Likely cause: the names are compared as strings ('step-10' < 'step-9'), not by "
            "step number."
        )
    ctx.check(
        "roundtrip",
        ok,
        f"latest() returns step {LAST}'s state after saves of steps {STEPS}"
        if ok
        else f"after saves of steps {STEPS} latest() {_outcome(got, error)}; expected step "
        f"{LAST}'s state.{cause} The directory holds {_listing(ckpt_dir)}",
    )

    biggest = max((p.stat().st_size for p in ckpt_dir.rglob("*") if p.is_file()), default=0)
    limit = max(biggest // 2, 4096)
    everywhere = _every_point(ctx, ckpt_dir, limit) if ckpt_dir.is_dir() else ""
    problem, _ = _crash_during_save(ctx, ckpt_dir, limit)
    if problem:
        ok, detail = False, f"{problem}; cannot test a crash"
    else:
        detail = _verdict(ctx, ckpt_dir, "in its first write past half a checkpoint")
        detail = detail or everywhere
        ok = not detail
        detail = detail or (
            f"a save of step {NEXT} was killed mid-write and at each of its file operations; "
            f"latest() always returns a complete state (step {LAST}'s until step {NEXT}'s is "
            "committed)"
        )
    ctx.check("survives_crash", ok, detail)

    try:
        save(_state(NEXT), str(ckpt_dir), NEXT)
        raised = None
    except Exception as error:
        raised = where(error, ctx.user_file)
    got, error = (None, None) if raised else _latest(ctx, ckpt_dir)
    ok = raised is None and error is None and _is_state(got, NEXT)
    if raised:
        detail = (
            f"after the crash, save() of step {NEXT} raised {raised}: what the killed save left "
            f"behind is in the way (expected the save to replace it). The directory holds "
            f"{_listing(ckpt_dir)}"
        )
    elif not ok:
        detail = (
            f"after the crash, step {NEXT} was saved again but latest() {_outcome(got, error)}; "
            f"expected step {NEXT}'s state"
        )
    else:
        detail = f"after the crash, step {NEXT} saves again and latest() returns it"
    ctx.check("saves_after_crash", ok, detail)

    ok, detail = _durable_commit(ctx)
    ctx.check("durable_commit", ok, detail)
    ok, detail = _no_fd_leak(ctx)
    ctx.check("no_fd_leak", ok, detail)
    ok, detail = _fresh_start(ctx, limit)
    ctx.check("fresh_start", ok, detail)

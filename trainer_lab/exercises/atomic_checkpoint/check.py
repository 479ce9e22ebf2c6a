"""atomic-checkpoint: one process. Saves of steps 1-3, then a save of step 4 in a forked child
whose file-size limit is half a checkpoint: the write past it raises SIGXFSZ, which kills the
child mid-write like a power cut or an OOM kill would (no except or finally runs). The reader
must then still find step 3, and the next save must still work."""

import os
import resource
import signal
from pathlib import Path
from typing import Any

import torch

from trainer_lab.exercises._checker.ctx import Ctx, where

SIZE = 256  # a 256x256 float32 tensor: a 256 KiB checkpoint


def _state(step: int) -> dict[str, Any]:
    g = torch.Generator().manual_seed(step)
    return {"step": step, "model": {"w": torch.randn(SIZE, SIZE, generator=g)}}


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


def _crash_during_save(ctx: Ctx, ckpt_dir: Path, limit: int) -> str:
    """Run save(step 4) in a child killed when a file it writes reaches `limit` bytes."""
    save = ctx.attr("save")
    pid = os.fork()
    if pid == 0:  # the child: die at the limit, never return into the checker
        code = 0
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # python ignores it by default
            hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
            save(_state(4), str(ckpt_dir), 4)
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXFSZ:
        return ""
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3:
        return "save() of step 4 raised instead of being killed mid-write"
    return f"save() of step 4 finished within a {limit:,} B file-size limit (no file that big)"


def run(ctx: Ctx) -> None:
    save = ctx.attr("save")
    ckpt_dir = ctx.scratch / "ckpt"
    for step in (1, 2, 3):
        ctx.call(save, _state(step), str(ckpt_dir), step)
    got, error = _latest(ctx, ckpt_dir)
    ok = error is None and _is_state(got, 3)
    ctx.check(
        "roundtrip",
        ok,
        "latest() returns step 3's state after saves of steps 1-3"
        if ok
        else f"after saves of steps 1-3 latest() {_outcome(got, error)}; "
        f"the directory holds {_listing(ckpt_dir)}",
    )

    biggest = max((p.stat().st_size for p in ckpt_dir.rglob("*") if p.is_file()), default=0)
    limit = max(biggest // 2, 4096)
    problem = _crash_during_save(ctx, ckpt_dir, limit)
    after = _listing(ckpt_dir)
    got, error = _latest(ctx, ckpt_dir)
    if problem:
        ok, detail = False, f"{problem}; cannot test a crash"
    elif error:
        ok, detail = (
            False,
            (
                f"a save of step 4 was killed mid-write, then latest() raised {error}: it read the "
                f"torn file. The directory holds {after}"
            ),
        )
    elif got is None:
        ok, detail = (
            False,
            (
                "a save of step 4 was killed mid-write, then latest() returned None: no complete "
                f"checkpoint is left (was the old one removed before the new one was committed?). "
                f"The directory holds {after}"
            ),
        )
    else:
        ok = _is_state(got, 3)
        detail = (
            "a save of step 4 was killed mid-write; latest() still returns step 3's complete state"
            if ok
            else f"a save of step 4 was killed mid-write, then latest() returned {_describe(got)}"
            f", not step 3's complete state. The directory holds {after}"
        )
    ctx.check("survives_crash", ok, detail)

    try:
        save(_state(4), str(ckpt_dir), 4)
        raised = None
    except Exception as error:
        raised = where(error, ctx.user_file)
    got, error = (None, None) if raised else _latest(ctx, ckpt_dir)
    ok = raised is None and error is None and _is_state(got, 4)
    if raised:
        detail = (
            f"after the crash, save() of step 4 raised {raised}: what the killed save left "
            f"behind is in the way. The directory holds {_listing(ckpt_dir)}"
        )
    elif not ok:
        detail = f"after the crash, step 4 was saved again but latest() {_outcome(got, error)}"
    else:
        detail = "after the crash, step 4 saves again and latest() returns it"
    ctx.check("saves_after_crash", ok, detail)

"""File-level observation of checkpoint writes and of the optimizer, beside recorder.py (torch).

- every file opened for writing inside the checkpoint dir (builtins.open / io.open, which
  pathlib, shutil, numpy and DCP use; os.open, which tempfile uses, also when os.fdopen wraps
  the fd in a file object), and every `torch.save` to a path there, is a "write" record with
  the optimizer step it followed; `os.fsync` / `os.fdatasync` of such a file (or of the dir) is
  an "fsync" record. A save that serializes into a BytesIO and writes the bytes itself is seen
  like a `torch.save` to the path;
- the tear fault: after optimizer step N, the K-th file this rank writes into the dir is cut to
  half its bytes as it is closed (or half the serialized bytes of a `torch.save`), fsynced, and
  the process SIGKILLed, as a crash in the middle of that file would leave it;
- per outermost optimizer step: the optimizer's class, its learning rates and a digest of its
  state before the step, so a bad resume can name what differed (the LR, the moments).
Records go to the recorder's files with its single-write appends.
"""

from __future__ import annotations

import builtins
import io
import os
import signal
import threading
from pathlib import Path
from typing import Any

import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from trainer_lab.usercode import protocol
from trainer_lab.usercode.recorder import Recorder, summarize

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _writes(mode: object) -> bool:
    return isinstance(mode, str) and any(c in mode for c in "wax+")


class _TornOnClose:
    """A file object that, when closed, is cut to half its bytes and kills the process."""

    def __init__(self, f: Any, watch: FsWatch, path: str) -> None:
        self._f = f
        self._watch = watch
        self._path = path

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> _TornOnClose:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Any:
        return iter(self._f)

    def close(self) -> None:
        self._f.flush()
        self._watch.tear_fd(self._f.fileno(), self._path)


class FsWatch:
    def __init__(self, recorder: Recorder, env: dict[str, str]) -> None:
        self.rec = recorder
        self.ckpt_dir = recorder.ckpt_dir
        after, k = env.get(protocol.TEAR_WRITE_AFTER_ENV), env.get(protocol.TEAR_WRITE_ENV)
        rank = env.get(protocol.TEAR_RANK_ENV)
        mine = not rank or int(rank) == recorder.rank
        self.tear_after = int(after) if after and k and mine else None
        self.tear_k = int(k) if k else 0
        self.writes_after = 0
        self._busy = 0  # inside torch.save: its own file access is not a second write
        self._tear_fds: dict[int, str] = {}
        self._depth = 0
        # per thread, the writes recorded: an open() whose opener calls os.open (tempfile's
        # NamedTemporaryFile) finds its file recorded already, by the os.open
        self._recorded = threading.local()
        self._steps = 0

    def install(self) -> None:
        register_optimizer_step_pre_hook(self._on_pre_step)
        register_optimizer_step_post_hook(self._on_post_step)
        if self.ckpt_dir is None:
            return
        self._wrap_open()
        self._wrap_os()
        self._wrap_save()

    # -- helpers -------------------------------------------------------------------------------
    def _inside(self, path: str) -> bool:
        assert self.ckpt_dir is not None
        try:
            return Path(path).resolve().is_relative_to(self.ckpt_dir)
        except (OSError, ValueError):
            return False

    def _event(self, event: str, path: str, **extra: Any) -> None:
        record = {
            "event": event,
            "path": self.rec._relative(path),
            "pstep": self.rec.pstep,
            "pid": os.getpid(),
            **extra,
        }
        self.rec.write(protocol.saves_file(self.rec.rank), record)

    def _write_starts(self, path: str, how: str) -> bool:
        """Record a write of `path`; True when it is the one to tear."""
        self._recorded.n = self.recorded() + 1
        tear = False
        if self.tear_after is not None and self.rec.pstep >= self.tear_after:
            self.writes_after += 1
            tear = self.writes_after == self.tear_k
        self._event("write", path, how=how, nth=self.writes_after if tear else None)
        return tear

    def recorded(self) -> int:
        """Writes this thread recorded so far."""
        return getattr(self._recorded, "n", 0)

    def _torn_on_close(self, f: Any) -> Any:
        """f, or f torn as it is closed when os.open opened its fd as the write to tear."""
        path = self._tear_fds.pop(f.fileno(), None)
        return f if path is None else _TornOnClose(f, self, path)

    def _torn(self, path: str, written: int, of: int) -> None:
        self._event("torn", path, bytes=written, of=of, write=self.writes_after)
        os.kill(os.getpid(), signal.SIGKILL)

    def tear_fd(self, fd: int, path: str) -> None:
        size = os.fstat(fd).st_size
        os.ftruncate(fd, size // 2)
        os.fsync(fd)
        self._torn(path, size // 2, size)

    # -- wrappers ------------------------------------------------------------------------------
    def _wrap_open(self) -> None:
        original = builtins.open
        watch = self

        def watched_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            before = watch.recorded()
            f = original(file, mode, *args, **kwargs)
            if isinstance(file, int) and not isinstance(file, bool):
                # os.fdopen, tempfile.mkstemp: a file object around an fd os.open opened (and
                # recorded); closing the object closes the fd: that is where it is torn
                closes = kwargs.get("closefd", args[5] if len(args) > 5 else True)
                return watch._torn_on_close(f) if closes else f
            if watch.recorded() != before:  # its opener's os.open recorded the file
                return watch._torn_on_close(f)
            if watch._busy or not _writes(mode) or not isinstance(file, str | bytes | os.PathLike):
                return f
            path = os.fsdecode(os.fspath(file))
            if not watch._inside(path):
                return f
            return _TornOnClose(f, watch, path) if watch._write_starts(path, "open") else f

        builtins.open = watched_open
        io.open = watched_open  # pathlib calls io.open

    def _wrap_os(self) -> None:
        watch = self
        os_open, os_close = os.open, os.close

        def watched_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = os_open(path, flags, *args, **kwargs)
            if watch._busy or not flags & _WRITE_FLAGS or kwargs.get("dir_fd") is not None:
                return fd
            if isinstance(path, str | bytes | os.PathLike):
                text = os.fsdecode(os.fspath(path))
                inside = watch._inside(text) and not os.path.isdir(text)
                if inside and watch._write_starts(text, "os.open"):
                    watch._tear_fds[fd] = text
            return fd

        def watched_os_close(fd: int) -> None:
            path = watch._tear_fds.pop(fd, None)
            if path is not None:
                watch.tear_fd(fd, path)
            os_close(fd)

        os.open = watched_os_open
        os.close = watched_os_close
        for name in ("fsync", "fdatasync"):
            original = getattr(os, name)

            def synced(fd: Any, _original: Any = original, _name: str = name) -> None:
                _original(fd)
                number = fd if isinstance(fd, int) else fd.fileno()
                try:
                    path = os.readlink(f"/proc/self/fd/{number}")
                except OSError:
                    return
                if watch._inside(path):
                    watch._event("fsync", path, how=_name)

            setattr(os, name, synced)

    def _wrap_save(self) -> None:
        inner = torch.save  # the recorder's wrapper
        watch = self

        def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(f, str | os.PathLike):
                path = os.fspath(f)
                if watch._inside(path) and watch._write_starts(path, "torch.save"):
                    buffer = io.BytesIO()
                    inner(obj, buffer, *args, **kwargs)
                    data = buffer.getvalue()
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                    os.write(fd, data[: len(data) // 2])
                    os.fsync(fd)
                    watch._torn(path, len(data) // 2, len(data))
            watch._busy += 1
            try:
                return inner(obj, f, *args, **kwargs)
            finally:
                watch._busy -= 1

        torch.save = save

    # -- optimizer -----------------------------------------------------------------------------
    def _on_pre_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        self._depth += 1
        if self._depth > 1:
            return
        self._steps += 1
        tensors = [
            v for state in optimizer.state.values() for v in state.values() if torch.is_tensor(v)
        ]
        lrs = []
        for group in optimizer.param_groups:
            try:
                lrs.append(float(group.get("lr", float("nan"))))
            except (TypeError, ValueError, RuntimeError):
                lrs.append(float("nan"))
        record = {
            "n": self._steps,
            "class": type(optimizer).__name__,
            "lr": lrs,
            "state": summarize(tensors)["digest"] if tensors else None,
            "state_tensors": len(tensors),
        }
        self.rec.write(protocol.optimizer_file(self.rec.rank), record)

    def _on_post_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        self._depth = max(0, self._depth - 1)

"""File-level observation of checkpoint writes and of the optimizer, beside recorder.py (torch).

- every file opened for writing inside the checkpoint dir (builtins.open / io.open, which
  pathlib, shutil, numpy and DCP use; os.open, which tempfile and Path.touch use, also when
  os.fdopen wraps the fd in a file object) is watched until it is closed. Closed with bytes
  written, it is a "write" record (with the optimizer step it followed and the bytes); closed
  without any (a `touch`ed commit marker, an `open(path, "a")` closed at once), a "create"
  record: creating an empty file is atomic, so it is never torn nor counted among the save's
  writes. Every `torch.save` to a path there is a "write" record. `os.fsync` / `os.fdatasync` of
  such a file (or of the dir) is an "fsync" record. A save that serializes into a BytesIO and
  writes the bytes itself is seen like a `torch.save` to the path; `on_write`, when set, is called
  as each watched file with bytes is closed (sigterm.py's second SIGTERM comes there);
- the tear fault: after optimizer step N, the K-th file with bytes this rank writes into the dir
  is cut to half the bytes written as it is closed (or half the serialized bytes of a
  `torch.save`), fsynced, and the process SIGKILLed, as a crash in the middle of that file would
  leave it;
- per optimizer step counted by the recorder (one that changed a parameter): the optimizer's
  class, its learning rates and a digest of its state before the step, so a bad resume can name
  what differed (the LR, the moments). State entries that are not dicts (None: the entries of
  the parameters a ZeroRedundancyOptimizer rank does not own, after load_state_dict) hold no
  state.
Every record carries `origin`: the optimizer step count when the work writing it began (an
asynchronous save's files, written while the next step runs, belong to the step that started
it: origin.py); a file torch.distributed.checkpoint itself opened (its own frames on the stack)
is marked `dcp`.
Records go to the recorder's files with its single-write appends.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from trainer_lab.usercode import origin, protocol
from trainer_lab.usercode.recorder import Recorder, summarize

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _writes(mode: object) -> bool:
    return isinstance(mode, str) and any(c in mode for c in "wax+")


_DCP_SOURCE = os.path.join("torch", "distributed", "checkpoint", "")


def _opened_by_dcp() -> bool:
    """Whether torch.distributed.checkpoint's own code is on this thread's stack (its storage
    writer opening a shard or its .metadata), not the script writing a file of that name."""
    frame = sys._getframe(1)
    while frame is not None:
        if _DCP_SOURCE in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


@dataclass
class _Open:
    """A file opened for writing inside the checkpoint dir, until it is closed."""

    path: str
    how: str
    start: int  # its size when opened (an append adds after it)
    append: bool
    dcp: bool = False  # opened by torch.distributed.checkpoint's code


class _Watched:
    """A file object whose close the watch sees (its bytes decide: a write, or an empty
    create; the write to tear is cut to half and the process killed there)."""

    def __init__(self, f: Any, watch: FsWatch) -> None:
        self._f = f
        self._watch = watch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> _Watched:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Any:
        return iter(self._f)

    def close(self) -> None:
        if self._f.closed:
            return
        try:
            self._f.flush()
            self._watch.closing(self._f.fileno())
        finally:
            self._f.close()

    def __del__(self) -> None:  # a file left to the garbage collector is closed there
        with contextlib.suppress(Exception):  # interpreter shutdown: nothing left to record
            self.close()


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
        self._open_fds: dict[int, _Open] = {}  # watched files not yet closed, by fd
        self._depth = 0
        # per thread, the files opened: an open() whose opener calls os.open (tempfile's
        # NamedTemporaryFile) finds its file watched already, by the os.open
        self._recorded = threading.local()
        self._pending: dict[str, Any] | None = None  # the optimizer record of the open step
        # called as a watched file with bytes is closed (fd, path, where its bytes start, its
        # size), after its record: sigterm.py's second SIGTERM midway through a save
        self.on_write: Callable[[int, str, int, int], None] | None = None

    def install(self) -> None:
        register_optimizer_step_pre_hook(self._on_pre_step)
        register_optimizer_step_post_hook(self._on_post_step)
        if self.ckpt_dir is None:
            return
        origin.install(lambda: self.rec.pstep)
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
            "origin": origin.origin(self.rec.pstep),
            "pid": os.getpid(),
            **extra,
        }
        self.rec.write(protocol.saves_file(self.rec.rank), record)

    def _counts(self) -> bool:
        """Count a write with bytes of a save begun after the tear step (its origin: an
        asynchronous save of an earlier step may still be writing then); True when it is the
        one to tear."""
        if self.tear_after is None or origin.origin(self.rec.pstep) < self.tear_after:
            return False
        self.writes_after += 1
        return self.writes_after == self.tear_k

    def _write_starts(self, path: str, how: str) -> bool:
        """Record a write of `path` whose bytes are known to come (torch.save); True when it is
        the one to tear."""
        tear = self._counts()
        self._event("write", path, how=how, nth=self.writes_after if tear else None)
        return tear

    def opened(self, fd: int, path: str, how: str, append: bool) -> None:
        """Watch a file opened for writing in the dir until `closing` sees it closed."""
        self._recorded.n = self.recorded() + 1
        self._open_fds[fd] = _Open(path, how, os.fstat(fd).st_size, append, _opened_by_dcp())

    def recorded(self) -> int:
        """Files this thread opened for writing in the dir so far."""
        return getattr(self._recorded, "n", 0)

    def closing(self, fd: int) -> None:
        """A watched file is being closed: record it as a write (bytes) or a create (none);
        tear it here when it is the write to tear."""
        entry = self._open_fds.pop(fd, None)
        if entry is None:
            return
        end = os.fstat(fd).st_size
        start = entry.start if entry.append else 0
        written = end - start
        by = {"dcp": True} if entry.dcp else {}
        if written <= 0:
            self._event("create", entry.path, how=entry.how, **by)
            return
        tear = self._counts()
        nth = self.writes_after if tear else None
        self._event("write", entry.path, how=entry.how, bytes=written, nth=nth, **by)
        if tear:
            kept = start + written // 2
            os.ftruncate(fd, kept)
            os.fsync(fd)
            self._torn(entry.path, kept, end)
        elif self.on_write is not None:
            self.on_write(fd, entry.path, start, end)

    def _watched(self, f: Any) -> Any:
        """f, watched until closed when its fd is a watched file's."""
        return _Watched(f, self) if f.fileno() in self._open_fds else f

    def _torn(self, path: str, kept: int, of: int) -> None:
        self._event("torn", path, bytes=kept, of=of, write=self.writes_after)
        os.kill(os.getpid(), signal.SIGKILL)

    # -- wrappers ------------------------------------------------------------------------------
    def _wrap_open(self) -> None:
        original = builtins.open
        watch = self

        def watched_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            before = watch.recorded()
            f = original(file, mode, *args, **kwargs)
            if isinstance(file, int) and not isinstance(file, bool):
                # os.fdopen, tempfile.mkstemp: a file object around an fd os.open opened (and
                # watches); closing the object closes the fd: that is where it is seen closed
                closes = kwargs.get("closefd", args[5] if len(args) > 5 else True)
                return watch._watched(f) if closes else f
            if watch.recorded() != before:  # its opener's os.open watches the file
                return watch._watched(f)
            if watch._busy or not _writes(mode) or not isinstance(file, str | bytes | os.PathLike):
                return f
            path = os.fsdecode(os.fspath(file))
            if not watch._inside(path):
                return f
            watch.opened(f.fileno(), path, "open", "a" in mode)
            return _Watched(f, watch)

        builtins.open = watched_open
        io.open = watched_open  # pathlib calls io.open

    def _wrap_os(self) -> None:
        watch = self
        os_open, os_close = os.open, os.close

        def watched_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = os_open(path, flags, *args, **kwargs)
            watch._open_fds.pop(fd, None)  # a number reused after a close the watch missed
            if watch._busy or not flags & _WRITE_FLAGS or kwargs.get("dir_fd") is not None:
                return fd
            if isinstance(path, str | bytes | os.PathLike):
                text = os.fsdecode(os.fspath(path))
                if watch._inside(text) and not os.path.isdir(text):
                    watch.opened(fd, text, "os.open", bool(flags & os.O_APPEND))
            return fd

        def watched_os_close(fd: int) -> None:
            try:
                if fd in watch._open_fds:
                    watch.closing(fd)
            finally:
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
        tensors = [
            v
            for state in optimizer.state.values()
            if isinstance(state, dict)
            for v in state.values()
            if torch.is_tensor(v)
        ]
        lrs = []
        for group in optimizer.param_groups:
            try:
                lrs.append(float(group.get("lr", float("nan"))))
            except (TypeError, ValueError, RuntimeError):
                lrs.append(float("nan"))
        self._pending = {
            "n": self.rec.pstep + 1,
            "class": type(optimizer).__name__,
            "lr": lrs,
            "state": summarize(tensors)["digest"] if tensors else None,
            "state_tensors": len(tensors),
        }

    def _on_post_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        """After the recorder's post hook: the record is written when it counted the step."""
        self._depth = max(0, self._depth - 1)
        record, self._pending = (self._pending, None) if self._depth == 0 else (None, None)
        if record is not None and record["n"] == self.rec.pstep:
            self.rec.write(protocol.optimizer_file(self.rec.rank), record)

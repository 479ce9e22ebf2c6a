"""The preemption fault (torch): SIGTERM to every rank, as a scheduler's notice, and a second one
midway through the save that follows (protocol.TERM_*_ENV).

Rank `first` gets SIGTERM right after its optimizer step N. Every other rank gets it at its first
observed action after its own step N + late_by: a dataset read, a torch.distributed call, an
optimizer step, a write into the checkpoint dir, or the script's end (a rank that ends before
that step never gets it). A signal that lands on every rank at one instant finds them at
different points of a step, and a scheduler's notices reach the nodes at different times; here
the late ranks' point is fixed per launch: a rank that stops on its own flag, without agreeing
with the others, stops a step or more later than the first, and late_by varies how much.
Each SIGTERM sent is recorded first (protocol.term_file: pstep, time, why), so a rank that dies of
it (no handler) leaves the record. The signal is sent by the rank to itself, from the main
thread: a Python handler runs at once, before the action goes on.

The second SIGTERM (`again`) comes during each rank's first write into the checkpoint dir after
its first SIGTERM, whatever writes it: a torch.save to a path (half the serialized bytes at the
path, then the signal), or any file fswatch.py watches (open(), a file object torch.save or
np.save writes into, os.open + os.write, DCP's files): as it is closed, it is cut to half its
bytes, fsynced, and the signal sent. A handler that returns lets the write go on (the bytes come
back whole); one that exits, or none, leaves the half.
"""

from __future__ import annotations

import io
import os
import signal
import time
from typing import Any

import torch
import torch.distributed as dist
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from trainer_lab.usercode import protocol
from trainer_lab.usercode.fswatch import FsWatch
from trainer_lab.usercode.recorder import Recorder, _inside, _target

# the torch.distributed calls that are a late rank's next action (the agreement goes through one)
COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "broadcast",
    "broadcast_object_list",
    "barrier",
    "monitored_barrier",
    "reduce_scatter_tensor",
    "gather_object",
    "destroy_process_group",
)


class TermFault:
    def __init__(
        self,
        recorder: Recorder,
        after_step: int,
        first: int,
        again: bool,
        late_by: int = 0,
        watch: FsWatch | None = None,
    ) -> None:
        self.rec = recorder
        self.after_step = after_step
        self.first = recorder.rank == first
        self.again = again
        self.late_by = late_by  # the late ranks' signal: after their step after_step + late_by
        self.watch = watch
        self.sent = 0  # SIGTERMs sent so far (at most 2)

    def install(self) -> None:
        self.hook_writes()
        register_optimizer_step_post_hook(self._on_post_step)
        register_optimizer_step_pre_hook(lambda *_: self.late("optimizer step"))
        on_fetch = self.rec.on_fetch

        def fetched(index: int) -> None:
            on_fetch(index)
            self.late("dataset read")

        self.rec.on_fetch = fetched  # type: ignore[method-assign]
        for name in COLLECTIVES:
            original = getattr(dist, name, None)
            if callable(original):
                setattr(dist, name, self._before(original, name))
        self._wrap_save()

    # -- sending -------------------------------------------------------------------------------
    def _send(self, why: str) -> None:
        self.sent += 1
        record = {"pstep": self.rec.pstep, "time": time.time(), "why": why, "pid": os.getpid()}
        self.rec.write(protocol.term_file(self.rec.rank), record)
        os.kill(os.getpid(), signal.SIGTERM)

    def _on_post_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self.first and not self.sent and self.rec.pstep == self.after_step:
            self._send(f"after step {self.after_step}")

    def late(self, why: str) -> None:
        """A late rank's observed action: its SIGTERM, once, after its step N."""
        late_step = self.after_step + self.late_by
        if not self.first and not self.sent and self.rec.pstep >= late_step:
            self._send(f"{why} after step {self.rec.pstep}")

    def at_end(self) -> None:
        self.late("script end")

    def _before(self, original: Any, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.late(f"dist.{name}")
            return original(*args, **kwargs)

        call.__wrapped__ = original  # type: ignore[attr-defined]
        return call

    # -- the save ------------------------------------------------------------------------------
    def _wrap_save(self) -> None:
        inner = torch.save  # the recorder's and fswatch's wrappers
        fault = self

        def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
            path = _target(f)
            ckpt = fault.rec.ckpt_dir
            if ckpt is not None and path is not None and _inside(path, ckpt):
                fault.late("checkpoint write")
                if fault.again and fault.sent == 1 and isinstance(f, str | os.PathLike):
                    fault._half_then_term(inner, obj, os.fspath(f), args, kwargs)
            return inner(obj, f, *args, **kwargs)

        torch.save = save

    def hook_writes(self) -> None:
        """Every file the watch sees written into the checkpoint dir: a late rank's action, and
        the place of the second SIGTERM."""
        if self.watch is not None:
            self.watch.on_write = self._on_write

    def _on_write(self, fd: int, path: str, start: int, end: int) -> None:
        """A file with bytes written into the checkpoint dir is being closed (fswatch.py)."""
        self.late("checkpoint write")
        if self.again and self.sent == 1:
            self._cut_then_term(fd, path, start, end)

    def _cut_then_term(self, fd: int, path: str, start: int, end: int) -> None:
        """The file at `fd` cut to half the bytes this write added, then the second SIGTERM: a
        process that dies of it, or whose handler raises (sys.exit), leaves the half; when the
        handler returns, the write goes on and the bytes are whole again."""
        keep = start + (end - start) // 2
        with io.FileIO(f"/proc/self/fd/{fd}", "r") as source:  # `fd` may be write-only
            source.seek(keep)
            tail = source.read(end - keep)
        os.ftruncate(fd, keep)
        os.fsync(fd)
        self._send(f"{protocol.TERM_DURING_SAVE} of {self.rec._relative(path)}")
        os.pwrite(fd, tail, keep)

    def _half_then_term(self, inner: Any, obj: Any, path: str, args: Any, kwargs: Any) -> None:
        """Half the bytes at `path`, then the second SIGTERM: a process that dies of it leaves
        them; one that handles it goes on, and the save rewrites the whole file."""
        buffer = io.BytesIO()
        inner(obj, buffer, *args, **kwargs)
        data = buffer.getvalue()
        with io.FileIO(path, "w") as out:  # not through the watched open(): no save recorded
            out.write(data[: len(data) // 2])
            os.fsync(out.fileno())
        self._send(f"{protocol.TERM_DURING_SAVE} of {self.rec._relative(path)}")


def install_term_fault(
    recorder: Recorder, env: dict[str, str], watch: FsWatch | None = None
) -> TermFault | None:
    """The preemption fault this launch asks for (protocol.TERM_AFTER_ENV), installed; `watch`:
    the launch's file watch, whose writes into the checkpoint dir the second SIGTERM cuts."""
    after = env.get(protocol.TERM_AFTER_ENV)
    if not after:
        return None
    first = int(env.get(protocol.TERM_FIRST_ENV) or 0)
    again = bool(env.get(protocol.TERM_AGAIN_ENV))
    late_by = int(env.get(protocol.TERM_LATE_BY_ENV) or 0)
    fault = TermFault(recorder, int(after), first, again, late_by, watch)
    fault.install()
    return fault

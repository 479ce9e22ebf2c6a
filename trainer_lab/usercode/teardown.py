"""A guard against gloo's teardown deadlock, armed when the script destroys its process group.

Seen in a correct script's rank (gdb): the main thread, holding the GIL, frees the last reference
to a ProcessGroupGloo (a DDP reducer going out of scope after `destroy_process_group()`); the
group's destructor joins its run-loop thread, which is freeing a finished collective's tensor and
waits for the GIL. Neither moves again. It is a race in torch, not in the script (about 1 grade
in 6 on a loaded machine; either rank), so a rank caught in it must not turn a correct script's
run into a hang.

Once `destroy_process_group()` returned with the default group gone, faulthandler is armed to
write every thread's stack to teardown-rank{R}-PID.txt and end the process (status 1) if the
script has not returned TEARDOWN_S later; the bootstrap disarms it when the script returns.
evidence.teardown_aborts then reads such a rank as the runtime's shutdown race (a note, not a
failure). A script that keeps working for longer than that after destroying its group is cut
short the same way; the stall watchdog (stall.py) would stop it soon after anyway.

A DataLoader shutting its worker processes down after the group was destroyed (the loader freed
when the script's main() returns) is bounded by torch itself (it joins each worker for at most
5 s, then terminates it) and takes seconds on a loaded machine: the guard is held meanwhile
(hold/release, from loader_workers.py) and given its full TEARDOWN_S again after it.
"""

from __future__ import annotations

import faulthandler
import functools
from pathlib import Path
from typing import Any, TextIO

from trainer_lab.usercode import protocol
from trainer_lab.usercode.protocol import TEARDOWN_S

_installed: TeardownGuard | None = None  # this process's guard (the bootstrap installs one)


def hold() -> None:
    """Stop the guard's clock while the script does bounded exit work (no-op when unarmed)."""
    if _installed is not None and _installed.armed:
        faulthandler.cancel_dump_traceback_later()


def release() -> None:
    """Give an armed guard its full TEARDOWN_S again after hold()."""
    if _installed is not None and _installed.armed:
        _installed.arm()


class TeardownGuard:
    def __init__(self, observe_dir: Path, rank: int, pid: int) -> None:
        self.path = observe_dir / protocol.teardown_file(rank, pid)
        self._file: TextIO | None = None
        self.armed = False

    def install(self) -> None:
        global _installed
        _installed = self
        import torch.distributed as dist
        import torch.distributed.distributed_c10d as c10d

        original = c10d.destroy_process_group
        guard = self

        @functools.wraps(original)
        def destroy_process_group(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            if not dist.is_initialized():  # the default group is gone: what is left is teardown
                guard.arm()
            return result

        dist.destroy_process_group = destroy_process_group
        c10d.destroy_process_group = destroy_process_group

    def arm(self) -> None:
        if self._file is None:
            self._file = open(self.path, "w")  # noqa: SIM115 - faulthandler writes to it later
        faulthandler.dump_traceback_later(TEARDOWN_S, exit=True, file=self._file)
        self.armed = True

    def disarm(self) -> None:
        self.armed = False
        faulthandler.cancel_dump_traceback_later()

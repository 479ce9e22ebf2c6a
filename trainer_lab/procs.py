"""Process-tree control on Linux through /proc and prctl (torch-free, no psutil).

torchrun starts every worker with start_new_session=True, so killing torchrun's process group
does not reach the workers. Two mechanisms make sure nothing survives a lab:
- every process we start sets PR_SET_PDEATHSIG=SIGKILL, so it dies with its parent;
- on timeout or cancel, `kill_tree` freezes (SIGSTOP) the whole descendant tree, walking /proc
  until no new process appears, then SIGKILLs every one of them.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Literal, NoReturn, Protocol

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
PARENT_ENV = "TRAINER_LAB_PARENT_PID"


def _prctl(option: int, value: int) -> bool:
    # CDLL(None) reaches libc's symbols already loaded into this process; find_library("c")
    # would start an `ldconfig -p` subprocess: slow, and a stray child while a tree is watched.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return False
    return prctl(option, value, 0, 0, 0) == 0


def die_with_parent(expected_parent: int | None = None) -> None:
    """Ask the kernel to SIGKILL this process when its parent exits.

    When the parent already died before the prctl took effect (we were reparented), exit at
    once. Without expected_parent, the parent is read just before the prctl.
    """
    parent = expected_parent if expected_parent is not None else os.getppid()
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(137)


def become_subreaper() -> bool:
    """Orphaned descendants get reparented to us, so a /proc walk from us still finds them."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


# What a process that stands in for its child (a keeper, a rank's wrapper) passes on to it.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)  # fmt: skip


def wait_forwarding(child: int, reap_others: bool = False) -> int:
    """Wait for child (our own), passing FORWARDED signals on to it meanwhile; returns its exit
    code as subprocess gives it. reap_others: also reap any other child that ends meanwhile (a
    subreaper's adopted orphans)."""

    def forward(signum: int, _frame: FrameType | None) -> None:
        _signal(child, signum)

    for sig in FORWARDED:
        signal.signal(sig, forward)
    while True:
        pid, status = os.waitpid(-1 if reap_others else child, 0)
        if pid == child:
            break
    for sig in FORWARDED:  # the child is gone: a signal now ends this process
        signal.signal(sig, signal.SIG_DFL)
    return os.waitstatus_to_exitcode(status)


def exit_like(code: int) -> NoReturn:
    """End this process as a child that ended with `code` did: the same status, or the same
    signal (with no core file)."""
    if code < 0:
        with contextlib.suppress(OSError, ValueError):
            _soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
            resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP have no handler
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'.
    rest = text[text.rfind(")") + 2 :].split()
    return int(rest[1]), rest[0]


def is_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    info = _stat(pid)
    return info is not None and info[1] not in ("Z", "X")


def children_map() -> dict[int, list[int]]:
    result: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        info = _stat(int(entry))
        if info is not None:
            result.setdefault(info[0], []).append(int(entry))
    return result


def descendants(pid: int) -> list[int]:
    """Every live descendant of pid (children, grandchildren, ...), parents first."""
    tree = children_map()
    found: list[int] = []
    stack = list(tree.get(pid, []))
    while stack:
        child = stack.pop()
        if child in found:
            continue
        found.append(child)
        stack.extend(tree.get(child, []))
    return found


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def kill_tree(root: int, include_root: bool = True) -> list[int]:
    """Freeze, then SIGKILL root and all its descendants; return every pid that was signalled."""
    frozen: list[int] = []
    if include_root:
        _signal(root, signal.SIGSTOP)
        frozen.append(root)
    # A stopped process cannot fork, so repeating the walk until it finds nothing new is enough.
    for _ in range(50):
        fresh = [pid for pid in descendants(root) if pid not in frozen]
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        frozen.extend(fresh)
    for pid in frozen:
        _signal(pid, signal.SIGKILL)
    wait_gone(frozen)
    return frozen


def wait_gone(pids: list[int], timeout_s: float = 10.0) -> list[int]:
    """Poll /proc until every pid is dead or a zombie (SIGKILL delivery is asynchronous);
    returns the pids still alive when timeout_s ran out."""
    deadline = time.monotonic() + timeout_s
    alive = [pid for pid in pids if is_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.01)
        alive = [pid for pid in alive if is_alive(pid)]
    return alive


def reap(pid: int) -> None:
    """Wait for a killed process that is our child (directly or as subreaper), so it does not
    linger as a zombie; no-op for processes that are not our children."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


StopReason = Literal["timeout", "cancelled"]


class Waitable(Protocol):
    """What supervise needs of a process: a Popen, or a warm launcher's process."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


@dataclass
class Supervised:
    """How a supervised process ended: stopped by us (`stop`) or on its own (`stop` None)."""

    stop: StopReason | None
    returncode: int
    killed: list[int] = field(default_factory=list)


def supervise(
    proc: Waitable,
    deadline: float,
    cancel: threading.Event | None = None,
    on_poll: Callable[[], None] | None = None,
    cancel_grace_s: float = 0.0,
    on_timeout: Callable[[], None] | None = None,
) -> Supervised:
    """Wait for proc; on cancel or once time.monotonic() passes deadline, stop it and every
    process it started, so nothing outlives the call (also when it is interrupted, e.g. by a
    KeyboardInterrupt in on_poll).

    On cancel with cancel_grace_s > 0 proc first gets SIGTERM and up to that long to finish on
    its own (e.g. to record what it has); then the rest of the tree is frozen and killed.
    on_poll is called about every 50 ms while proc runs; on_timeout once the deadline passed,
    before anything is killed (e.g. to ask the processes for their stacks).
    """
    stop: StopReason | None = None
    killed: list[int] = []
    try:
        while True:
            try:
                proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            if on_poll is not None:
                on_poll()
            if cancel is not None and cancel.is_set():
                stop = "cancelled"
                if cancel_grace_s > 0:
                    _terminate_within(proc.pid, cancel_grace_s)
            elif time.monotonic() > deadline:
                stop = "timeout"
                if on_timeout is not None:
                    on_timeout()
            if stop is not None:
                killed = kill_tree(proc.pid)
                proc.wait()
                break
    finally:
        if proc.poll() is None:
            killed = kill_tree(proc.pid)
            proc.wait()
    for pid in killed:
        if pid != proc.pid:
            reap(pid)
    return Supervised(stop, proc.returncode, killed)


def _terminate_within(pid: int, grace_s: float) -> None:
    """SIGTERM pid and poll until it exits (it stays a zombie: the caller reaps it)."""
    _signal(pid, signal.SIGTERM)
    wait_gone([pid], grace_s)

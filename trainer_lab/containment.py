"""Contain a launch of user code: nothing it starts outlives it (Linux; torch-free).

A process the code starts may leave the launch's session (`start_new_session=True`), its tree (a
double fork: fork, setsid, fork, the parent exits) or ignore SIGTERM. Two mechanisms catch it,
each used where it can be:

- a cgroup per launch (`Containment.create`): cgroup2 (`cgroup.kill`, or `cgroup.freeze` and
  SIGKILL), else a cgroup v1 freezer hierarchy (FROZEN, SIGKILL, THAWED). The launch's root
  process joins it before it starts anything, so every process the code starts is a member,
  whatever its session or parent. After the launch the harness kills every member, waits until
  the group is empty and removes it.
- a keeper: the launch's root makes itself a child subreaper (PR_SET_CHILD_SUBREAPER) and forks;
  the fork runs the launch, the keeper waits and passes signals on. Orphans anywhere in the tree
  are reparented to the keeper (not to init, not to the warm server), so a /proc walk from it
  finds them: when its child has ended it freezes and SIGKILLs every descendant left, reaps them
  and only then exits, as its child ended. This needs no privileges (a non-root user, no cgroup).
  The warm agent's rank wrappers keep their rank the same way (`keep_tree`): a process a rank
  left behind holds the rank's multiprocessing sentinel, and elastic would wait for it.

The caller asks for both through one variable in the launch's environment (CONTAIN_ENV, the
cgroup's member files, empty when none could be made); the root process takes it out of its
environment (`enter`), so user code does not see it. Cold, the root runs as
`python -m trainer_lab.containment MODULE ARGS`; warm, `warm.job.fork_job` calls `enter`.
What the keeper cannot stop without a cgroup: code that kills its keeper first (its processes
then go to init), and anything once the caller itself is SIGKILLed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from trainer_lab.procs import (
    PARENT_ENV,
    become_subreaper,
    die_with_parent,
    exit_like,
    kill_tree,
    wait_forwarding,
    wait_gone,
)

CONTAIN_ENV = "TRAINER_LAB_CONTAIN"
MOUNTS_FILE = Path("/proc/self/mounts")
OWN_CGROUPS_FILE = Path("/proc/self/cgroup")
EMPTY_WAIT_S = 10.0
_names = itertools.count()

# Where the app's files are found from the environment (drill.paths: DRILL_HOME, else the XDG
# data/config/cache dirs, else under HOME): none of it is handed to user code, nor to the warm
# server its ranks are forked from (a fork's /proc/self/environ is the server's).
APP_ENV = ("DRILL_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")
APP_ENV_PREFIX = "DRILL_"


def without_app_env(env: dict[str, str]) -> dict[str, str]:
    """env without the app's variables (APP_ENV and every DRILL_* one)."""
    return {k: v for k, v in env.items() if k not in APP_ENV and not k.startswith(APP_ENV_PREFIX)}


# -- the cgroup ---------------------------------------------------------------------------------
CgroupKind = Literal["v2", "freezer"]


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, fs type, options) of every cgroup hierarchy mounted here."""
    found = []
    with contextlib.suppress(OSError):
        for line in MOUNTS_FILE.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                found.append((parts[1], parts[2], parts[3].split(",")))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy: "" for cgroup2, else each v1 controller name."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in OWN_CGROUPS_FILE.read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                paths[name] = path
    return paths


def _candidates() -> list[tuple[CgroupKind, Path]]:
    """Where a launch's cgroup may be made, best first: beside this process's own cgroup."""
    own = _own_paths()
    found: list[tuple[CgroupKind, Path]] = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup2" and "" in own:
            found.insert(0, ("v2", Path(mount + own[""])))
        elif fstype == "cgroup" and "freezer" in options and "freezer" in own:
            found.append(("freezer", Path(mount + own["freezer"])))
    return found


@dataclass
class Cgroup:
    path: Path
    kind: CgroupKind

    @classmethod
    def make(cls) -> Cgroup | None:
        """A new, empty cgroup, or None where none can be made (no permission, no hierarchy)."""
        for kind, parent in _candidates():
            for _ in range(100):
                path = parent / f"trainer-lab-{os.getpid()}-{next(_names)}"
                try:
                    path.mkdir()
                except FileExistsError:
                    continue
                except OSError:
                    break
                group = cls(path, kind)
                if group.procs_file.exists():
                    return group
                group.remove()
                break
        return None

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

    def members(self) -> list[int]:
        try:
            return [int(pid) for pid in self.procs_file.read_text().split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> list[int]:
        """SIGKILL every member, frozen first so none can fork meanwhile; waits until the
        group is empty (EMPTY_WAIT_S at most) and returns the pids that were members."""
        killed = self.members()
        if not killed:
            return []
        if self.kind == "v2" and (self.path / "cgroup.kill").exists():
            _write(self.path / "cgroup.kill", "1")
        else:
            self._freeze(True)
            for pid in self.members():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            self._freeze(False)  # v1: frozen tasks die only once thawed
        deadline = time.monotonic() + EMPTY_WAIT_S
        while self.members() and time.monotonic() < deadline:
            time.sleep(0.01)
        return killed

    def _freeze(self, frozen: bool) -> None:
        if self.kind == "v2":
            _write(self.path / "cgroup.freeze", "1" if frozen else "0")
            done, state_file = f"frozen {int(frozen)}", self.path / "cgroup.events"
        else:
            _write(self.path / "freezer.state", "FROZEN" if frozen else "THAWED")
            done, state_file = "FROZEN" if frozen else "THAWED", self.path / "freezer.state"
        deadline = time.monotonic() + EMPTY_WAIT_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if done in state_file.read_text().splitlines():
                    return
            time.sleep(0.005)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.rmdir()


def _write(path: Path, text: str) -> None:
    with contextlib.suppress(OSError):
        path.write_text(text)


@dataclass
class Containment:
    """One launch's containment, made by the caller before the launch starts."""

    cgroup: Cgroup | None = None
    killed: list[int] = field(default_factory=list)  # what was still there at the end

    @classmethod
    def create(cls) -> Containment:
        return cls(Cgroup.make())

    def env(self) -> dict[str, str]:
        """What the launch's environment gets: its root joins the cgroup and keeps its tree."""
        return {CONTAIN_ENV: str(self.cgroup.procs_file) if self.cgroup else ""}

    def members(self) -> list[int]:
        return self.cgroup.members() if self.cgroup else []

    def close(self) -> list[int]:
        """After the launch: kill whatever is still in the cgroup, check that nothing is left,
        remove it; returns the pids that had to be killed."""
        if self.cgroup is None:
            return []
        self.killed = self.cgroup.kill()
        left = [pid for pid in self.cgroup.members() if pid not in self.killed]
        self.killed += left
        wait_gone(left)
        self.cgroup.remove()
        return self.killed


# -- the launch's side --------------------------------------------------------------------------
def enter() -> None:
    """In a launch's root process, before it starts anything: join the cgroup named in
    CONTAIN_ENV and become the keeper of what follows. Returns in the keeper's child (which runs
    the launch); the keeper itself exits once its tree is gone. No-op without CONTAIN_ENV."""
    value = os.environ.pop(CONTAIN_ENV, None)
    if value is None:
        return
    for procs_file in filter(None, value.split(os.pathsep)):
        _write(Path(procs_file), str(os.getpid()))
    keep()


def keep() -> None:
    """Fork: the child returns (and dies with this process); this process keeps its tree (see
    keep_tree) and then exits as the child did."""
    kept = keep_tree()
    if kept is not None:
        exit_like(kept[1])


def keep_tree() -> tuple[int, int] | None:
    """Fork: returns None in the child, which dies with this process. This process, a child
    subreaper, passes signals on, waits for the child, then kills and reaps every descendant
    left (the child's orphans are reparented to it) and returns (child pid, its exit code)."""
    become_subreaper()  # where it cannot be, only the descendants still in the tree are found
    keeper = os.getpid()
    os.environ[PARENT_ENV] = str(keeper)
    child = os.fork()
    if child == 0:
        die_with_parent(keeper)
        return None
    code = wait_forwarding(child, reap_others=True)
    _end_tree(keeper)
    return child, code


def _end_tree(keeper: int) -> None:
    """Kill every descendant of the keeper and reap them, until it has no child at all."""
    while True:
        kill_tree(keeper, include_root=False)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            return


if __name__ == "__main__":
    import runpy
    import sys

    expected = os.environ.get(PARENT_ENV)
    die_with_parent(int(expected) if expected else None)
    enter()
    sys.argv = sys.argv[1:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)

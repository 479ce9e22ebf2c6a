"""What the containment tests share: the pids escaping_children recorded, and which still live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import escaping_children
from tests.support.escaping_children import start_time
from trainer_lab import containment
from trainer_lab.procs import is_alive

SOURCE = Path(escaping_children.__file__).read_text()


def recorded(folder: Path) -> dict[str, list[tuple[int, int]]]:
    """Every (pid, start time) each kind recorded (all of them: each must have started)."""
    found = {}
    for kind in escaping_children.KINDS:
        path = folder / f"pid-{kind}"
        assert path.exists(), f"{kind} never started"
        lines = [line.split() for line in path.read_text().splitlines()]
        found[kind] = [(int(pid), int(start)) for pid, start in lines]
    return found


def survivors(folder: Path) -> dict[str, list[int]]:
    """The recorded processes still alive (same pid, same start time), by kind; empty when
    every one is gone."""
    alive = {
        kind: [pid for pid, start in found if is_alive(pid) and start_time(pid) == start]
        for kind, found in recorded(folder).items()
    }
    return {kind: pids for kind, pids in alive.items() if pids}


def without_cgroups(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No cgroup hierarchy is found (as for a user who may not make one): the keeper alone."""
    monkeypatch.setattr(containment, "MOUNTS_FILE", tmp_path / "no-mounts")
    assert containment.Cgroup.make() is None


def require_cgroups() -> None:
    """As root with a cgroup filesystem mounted (this machine and CI) a cgroup must be made: a
    failure there is a failure, not a skip. Only a user who may not make one skips."""
    group = containment.Cgroup.make()
    if group is None:
        if os.geteuid() == 0 and Path("/sys/fs/cgroup").is_dir():
            pytest.fail("running as root with /sys/fs/cgroup, yet no cgroup could be made")
        pytest.skip("no cgroup can be made by this user")
    group.remove()

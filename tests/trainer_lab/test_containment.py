"""Containment without torch: the keeper and the cgroup each end what escaped a process tree
(a new session, a double fork, a daemon ignoring SIGTERM, a forking hopper)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.containment import require_cgroups, survivors, without_cgroups
from trainer_lab.containment import CONTAIN_ENV, Containment, without_app_env
from trainer_lab.procs import PARENT_ENV

REPO = Path(__file__).resolve().parents[2]


def test_the_keeper_ends_every_escaped_process_and_exits_as_its_child(tmp_path, monkeypatch):
    without_cgroups(monkeypatch, tmp_path)
    env = {**os.environ, CONTAIN_ENV: "", PARENT_ENV: str(os.getpid())}
    module = ["tests.support.escaping_children", str(tmp_path), "3"]
    done = subprocess.run(
        [sys.executable, "-m", "trainer_lab.containment", *module], cwd=REPO, env=env, timeout=120
    )
    assert done.returncode == 3
    assert survivors(tmp_path) == {}


def test_the_cgroup_ends_what_left_the_tree_without_a_keeper(tmp_path):
    require_cgroups()
    box = Containment.create()
    assert box.cgroup is not None
    joins_then_escapes = (
        "import os, sys\n"
        "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "from tests.support.escaping_children import start_all\n"
        "start_all(sys.argv[2])\n"
    )
    procs_file = box.env()[CONTAIN_ENV]
    try:
        subprocess.run(
            [sys.executable, "-c", joins_then_escapes, procs_file, str(tmp_path)],
            cwd=REPO,
            check=True,
            timeout=120,
        )
        escaped = survivors(tmp_path)
        # no keeper: they all still run (the hopper's newest pid may not be recorded yet)
        assert {"session", "double", "daemon"} <= set(escaped)
        assert {pid for pids in escaped.values() for pid in pids} <= set(box.members())
    finally:
        killed = box.close()
    assert survivors(tmp_path) == {}
    assert set(escaped["daemon"]) <= set(killed)
    assert not box.cgroup.path.exists()


def test_user_code_gets_none_of_the_apps_variables():
    env = {"DRILL_HOME": "/h", "DRILL_ANYTHING": "1", "XDG_DATA_HOME": "/x", "PATH": "/bin"}
    assert without_app_env(env) == {"PATH": "/bin"}

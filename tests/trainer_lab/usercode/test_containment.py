"""Graded code is contained under both launchers: nothing it starts (a new session, a double
fork, a daemon ignoring SIGTERM, a forking hopper) outlives its grading, with a cgroup and with
the keeper alone; and it finds none of the app's variables, not even in /proc/self/environ (a
warm rank is a fork of the warm server)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.containment import SOURCE, require_cgroups, survivors, without_cgroups
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, run_script

pytestmark = pytest.mark.lab


def run(tmp_path: Path, source: str, launcher: str) -> ScriptRun:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(source)
    launch = ScriptLaunch(
        "t", script, (), 1, tmp_path / "run", tmp_path / "ckpt", 240, launcher=launcher
    )
    return run_script(launch)


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "keeper-only"])
@pytest.mark.parametrize("launcher", ["torchrun", "warm"])
def test_nothing_the_script_starts_outlives_its_grading(tmp_path, monkeypatch, launcher, cgroups):
    if cgroups:
        require_cgroups()
    else:
        without_cgroups(monkeypatch, tmp_path)
    result = run(tmp_path, SOURCE, launcher)
    assert result.status == "ok", result.summary()
    assert survivors(tmp_path / "ws") == {}


SEES = """\
import os
with open('/proc/self/environ', 'rb') as f:
    initial = [item.split(b'=', 1)[0].decode() for item in f.read().split(b'\\0') if item]
def apps(names):
    wanted = ('DRILL_HOME', 'DRILL_TEST_SECRET')
    return sorted(n for n in names if n in wanted or n.startswith('XDG_'))
open('seen', 'w').write(repr((apps(os.environ), apps(initial))))
"""


@pytest.mark.parametrize("launcher", ["torchrun", "warm"])
def test_the_script_finds_no_app_variable_anywhere(tmp_path, monkeypatch, launcher):
    monkeypatch.setenv("DRILL_TEST_SECRET", "1")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    result = run(tmp_path, SEES, launcher)
    assert result.status == "ok", result.summary()
    assert ast.literal_eval((tmp_path / "ws" / "seen").read_text()) == ([], [])

"""Hostile and broken user code through the harness: a clear outcome, never a hang, nothing
left running (real processes: the bootstrap imports torch)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trainer_lab.procs import is_alive
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, run_script, session_members

pytestmark = pytest.mark.lab


def run(tmp_path: Path, source: str, timeout_s: float = 60.0, world_size: int = 0) -> ScriptRun:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(source)
    launch = ScriptLaunch(
        "t", script, ("--steps", "1"), world_size, tmp_path / "run", tmp_path / "ckpt", timeout_s
    )
    return run_script(launch)


def test_runs_in_the_workspace_with_the_arguments_and_no_cuda(tmp_path):
    result = run(
        tmp_path,
        "import os, sys\n"
        "open('marker', 'w').write(repr((sys.argv[1:], os.environ['CUDA_VISIBLE_DEVICES'])))\n",
    )
    assert result.status == "ok", result.summary()
    assert (tmp_path / "ws" / "marker").read_text() == "(['--steps', '1'], '')"


def test_an_error_names_the_script_line(tmp_path):
    result = run(tmp_path, "x = 1\nimport no_such_module_here\n")
    assert result.status == "error"
    assert "ModuleNotFoundError: No module named 'no_such_module_here' (train.py:2)" in (
        result.summary()
    )


def test_an_infinite_loop_meets_the_deadline_and_says_where(tmp_path):
    # the loop on one line: a sample taken on the `while` test or in the body names the same line
    result = run(tmp_path, "x = 0\nwhile True: x += 1\n", timeout_s=20)
    assert result.status == "timeout"
    assert result.hangs == {0: "running <module> at train.py:2"}
    assert (
        result.summary()
    ) == "deadline: killed after 20 s (rank 0: running <module> at train.py:2)"


def test_orphaned_children_are_killed_too(tmp_path):
    source = (
        "import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(600)\n"
        "open('child', 'w').write(str(pid))\n"
    )
    result = run(tmp_path, source)
    assert result.status == "ok", result.summary()
    child = int((tmp_path / "ws" / "child").read_text())
    assert not is_alive(child)


def test_a_fork_bomb_stops_at_the_process_limit(tmp_path):
    """Also as root, whom RLIMIT_NPROC does not bind: the supervisor's process count stops it
    (an error, not the deadline) and no process of the bomb is left."""
    bomb = "import os\nopen('sid', 'w').write(str(os.getsid(0)))\nwhile True:\n    os.fork()\n"
    result = run(tmp_path, bomb, timeout_s=60)
    assert result.status == "error", result.summary()
    assert "hit the process limit" in result.summary()
    assert session_members(int((tmp_path / "ws" / "sid").read_text())) == []


def test_runaway_memory_is_a_memory_error(tmp_path):
    result = run(tmp_path, "blocks = []\nblocks.append(bytearray(8 * 2**30))\n")
    assert result.status == "error"
    assert "MemoryError" in result.summary() and "(train.py:2)" in result.summary()
    assert "hit the address-space limit" in result.summary()


def test_megabytes_of_output_stop_at_the_file_size_limit(tmp_path):
    result = run(tmp_path, "while True:\n    print('x' * 10000)\n", timeout_s=60)
    assert result.status == "error", result.summary()
    assert "File too large" in result.summary()
    assert os.path.getsize(result.stdout_path(0)) <= 64 * 1024**2


def test_the_script_gets_no_way_to_the_apps_data(tmp_path, monkeypatch):
    """No DRILL_HOME (nor the XDG dirs) in its environment; its home is the workspace."""
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "drill-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    result = run(
        tmp_path,
        "import os\n"
        "env = os.environ\n"
        "seen = (env.get('DRILL_HOME'), env.get('XDG_DATA_HOME'), env['HOME'])\n"
        "open('marker', 'w').write(repr(seen))\n",
    )
    assert result.status == "ok", result.summary()
    workspace = tmp_path / "ws"
    assert (workspace / "marker").read_text() == repr((None, None, str(workspace)))

"""A fault the grader injects (a kill, a torn save) reads as planned, never as the script's error
(hand-made run directories: no process runs)."""

from __future__ import annotations

import json
from pathlib import Path

from trainer_lab.grading.checks_run import failed_run_detail
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import PLANNED, ScriptLaunch, ScriptRun, _root_cause


def ended_run(tmp_path: Path, events: list[dict]) -> ScriptRun:
    """A one-process run that exited by SIGKILL, with these save events and a stderr line."""
    launch = ScriptLaunch(
        "tear", tmp_path / "ws" / "train.py", (), 0, tmp_path / "run", tmp_path / "ckpt", 60.0
    )
    observe = launch.run_dir / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    lines = "".join(json.dumps(e) + "\n" for e in events)
    (observe / protocol.saves_file(0)).write_text(lines)
    (launch.run_dir / "stderr.log").write_text("Killed\n")
    run = ScriptRun(launch, "error", -9, 1.5)
    run.root_cause = _root_cause(run)
    return run


def test_a_planned_kill_reads_as_planned_not_as_an_error(tmp_path):
    run = ended_run(tmp_path, [{"event": "killed", "pstep": 8}])
    assert run.root_cause is not None and run.root_cause.kind == PLANNED
    assert run.summary() == "rank 0: SIGKILLed as planned after step 8"
    assert failed_run_detail(run) == run.summary()  # no stderr tail: nothing went wrong


def test_a_torn_save_reads_as_planned(tmp_path):
    run = ended_run(tmp_path, [{"event": "torn", "path": "ckpt/step8.pt", "pstep": 8}])
    assert run.summary() == "rank 0: SIGKILLed as planned while saving ckpt/step8.pt (step 8)"


def test_an_unplanned_kill_still_reads_as_an_error(tmp_path):
    run = ended_run(tmp_path, [])
    assert run.summary() == "error: rank 0: killed by signal SIGKILL"
    assert failed_run_detail(run).endswith("; stderr: Killed")

"""The monitoring checks on hand-written step lines (no process runs)."""

from __future__ import annotations

from dataclasses import replace

from tests.support.script_runs import fake_run, write_stdout
from trainer_lab.grading.checks_monitoring import monitoring_checks

GOOD = {"phases": {"data": 0.02, "fwd": 0.004, "bwd": 0.005}, "step_time": 0.03}


def test_a_run_that_hung_after_three_good_step_lines_fails_monitoring(tmp_path):
    run = fake_run(tmp_path, 2, {})
    write_stdout(run, 0, [{"step": s, "loss": 1.0, **GOOD} for s in (1, 2, 3)])
    assert all(c["passed"] for c in monitoring_checks(run))
    hung = replace(run, status="timeout")
    checks = monitoring_checks(hung)
    assert [c["passed"] for c in checks] == [False, False]
    for c in checks:
        assert c["detail"].startswith("deadline: killed after"), c["detail"]
        assert "3 step lines" in c["detail"]


def test_a_timer_that_leaves_the_waiting_reads_out_fails(tmp_path):
    run = fake_run(tmp_path, 2, {})
    untimed = {"phases": {"fwd": 0.004, "bwd": 0.005, "opt": 0.001}, "step_time": 0.03}
    write_stdout(run, 0, [{"step": s, "loss": 1.0, **untimed} for s in (1, 2)])
    named, adds = monitoring_checks(run)
    assert named["passed"] and not adds["passed"]
    assert adds["detail"].startswith("phases add up to 33.3% of the step time")


def _lines(phases: list[dict[str, float]], step_time: float) -> list[dict]:
    return [{"step": i + 1, "phases": p, "step_time": step_time} for i, p in enumerate(phases)]


def test_the_step_times_and_one_phase_each_must_hold_the_known_waits() -> None:
    from trainer_lab.grading.checks_monitoring import waits_problem

    timed = {"data": 0.021, "forward": 0.003, "optimizer": 0.012}  # 4 reads x 5 ms, 10 ms step
    lines = _lines([timed] * 10, 0.036)
    assert waits_problem(lines, 0.2, 0.1) is None
    # the timer starts after the reads: the steps hold less than the waits
    untimed = _lines([{"forward": 0.003, "backward": 0.002, "optimizer": 0.011}] * 10, 0.016)
    why = waits_problem(untimed, 0.2, 0.1) or ""
    assert "the step timer starts after the batch is read" in why
    # fixed quarters of a true step time: no phase holds the reads' wait
    quarters = dict.fromkeys(("data", "forward", "backward", "optimizer"), 0.009)
    shares = _lines([quarters] * 10, 0.036)
    assert "no phase holds that much" in (waits_problem(shares, 0.2, 0.1) or "")
    assert waits_problem(lines, 0.0, 0.0) is None  # without waits (a launch without known work)

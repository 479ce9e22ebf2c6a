"""The evaluation prompt's checks on printed lines and the harness's recorded reads (no runs):
the best is the lowest eval loss over both sides of the restart, the model in DIR is checked on
the eval values of the run that printed that best, numbers no eval sample was read for fail,
and the relaunch resumes at the newest checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

from trainer_lab.grading.prompts.checks_eval import (
    EVAL_BASE,
    EVAL_SIZE,
    best_checks,
    during_checks,
    exact_checks,
)
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun

EVERY_EVAL_READ = {0: range(EVAL_SIZE)}


def run_printing(
    tmp_path: Path, name: str, *items: dict, reads: dict[int, range] | None = None
) -> ScriptRun:
    """A finished one-process run whose stdout holds `items` as JSON lines and whose recorded
    dataset reads are `reads` (optimizer steps done -> eval sample indices; default: the whole
    eval set before any step)."""
    run_dir = tmp_path / name
    (run_dir / protocol.OBSERVE_DIR).mkdir(parents=True)
    (run_dir / "stdout.log").write_text("".join(json.dumps(i) + "\n" for i in items))
    fetched = [
        json.dumps({"pstep": done, "id": EVAL_BASE + i})
        for done, ids in (EVERY_EVAL_READ if reads is None else reads).items()
        for i in ids
    ]
    (run_dir / protocol.OBSERVE_DIR / protocol.fetch_file(0)).write_text("\n".join(fetched))
    launch = ScriptLaunch(name, Path("train.py"), (), 0, run_dir, tmp_path / "ckpt", 60.0)
    return ScriptRun(launch, "ok", 0, 1.0)


def ev(step: int, loss: float) -> dict:
    return {"eval_step": step, "loss": loss, "accuracy": 0.5, "count": EVAL_SIZE}


def verdicts(checks) -> dict[str, bool]:
    return {c["name"]: c["passed"] for c in checks}


def test_a_best_after_the_restart_is_checked_on_the_relaunchs_eval_values(tmp_path):
    kill = run_printing(tmp_path, "kill", ev(4, 0.9), ev(8, 0.8))
    resume = run_printing(tmp_path, "resume", ev(12, 0.5), {"best_step": 12, "best_loss": 0.5})
    on_kill_values = run_printing(tmp_path, "best-eval", ev(12, 1.7))
    on_resume_values = run_printing(tmp_path, "best-eval-shifted", ev(12, 0.5))
    checks = best_checks(kill, resume, on_kill_values, on_resume_values)
    assert verdicts(checks) == {"best.survives_restart": True, "best.checkpoint_is_best": True}


def test_a_best_lost_on_restart_fails_both_checks(tmp_path):
    kill = run_printing(tmp_path, "kill", ev(4, 0.9), ev(8, 0.6))
    resume = run_printing(tmp_path, "resume", ev(12, 1.4), {"best_step": 12, "best_loss": 1.4})
    on_kill_values = run_printing(tmp_path, "best-eval", ev(12, 1.1))  # DIR holds step 12's
    on_resume_values = run_printing(tmp_path, "best-eval-shifted", ev(12, 1.4))
    checks = best_checks(kill, resume, on_kill_values, on_resume_values)
    assert verdicts(checks) == {"best.survives_restart": False, "best.checkpoint_is_best": False}
    assert "expected step 8, loss 0.6" in checks[0]["detail"]
    assert "likely cause: the best metric is not restored" in checks[0]["detail"]


def test_eval_only_numbers_that_ignore_the_eval_values_fail_the_checkpoint_check(tmp_path):
    kill = run_printing(tmp_path, "kill", ev(4, 0.9), ev(8, 0.6))
    resume = run_printing(tmp_path, "resume", ev(12, 1.4), {"best_step": 8, "best_loss": 0.6})
    cached = run_printing(tmp_path, "best-eval", ev(8, 0.6), reads={})  # replays, reads nothing
    same = run_printing(tmp_path, "best-eval-shifted", ev(8, 0.6))  # reads, prints the same
    checks = best_checks(kill, resume, cached, same)
    assert verdicts(checks) == {"best.survives_restart": True, "best.checkpoint_is_best": False}
    assert "25 of 25 eval samples never read" in checks[1]["detail"]
    checks = best_checks(kill, resume, run_printing(tmp_path, "again", ev(8, 0.6)), same)
    assert not checks[1]["passed"]
    assert "the same loss on other eval values" in checks[1]["detail"]


def test_a_relaunch_that_replays_evaluated_steps_fails_survives_restart(tmp_path):
    kill = run_printing(tmp_path, "kill", ev(4, 0.9), ev(8, 0.8), ev(12, 0.5))
    replayed = (ev(12, 1.1), ev(16, 1.3), {"best_step": 12, "best_loss": 0.5})
    resume = run_printing(tmp_path, "resume", *replayed)
    on_kill_values = run_printing(tmp_path, "best-eval", ev(12, 0.5))
    on_resume_values = run_printing(tmp_path, "best-eval-shifted", ev(12, 0.7))
    checks = best_checks(kill, resume, on_kill_values, on_resume_values, [16])
    assert verdicts(checks) == {"best.survives_restart": False, "best.checkpoint_is_best": True}
    assert "the relaunch evaluated steps [12, 16] (expected [16]" in checks[0]["detail"]
    resumed = run_printing(tmp_path, "resumed", *replayed[1:])
    checks = best_checks(kill, resumed, on_kill_values, on_resume_values, [16])
    assert verdicts(checks)["best.survives_restart"]


def test_printed_constants_without_reading_the_eval_set_fail_exact(tmp_path):
    honest = [run_printing(tmp_path, f"w{w}", ev(0, 1.0986)) for w in (1, 2)]
    constant = run_printing(tmp_path, "w3", ev(0, 1.0986), reads={0: range(EVAL_SIZE - 1)})
    assert verdicts(exact_checks(honest)) == {
        "exact.count_is_eval_size": True,
        "exact.same_at_every_world_size": True,
    }
    checks = exact_checks([*honest, constant])
    assert not any(verdicts(checks).values())
    assert "1 of 25 eval samples never read" in checks[0]["detail"]


def test_evals_are_judged_on_the_reads_at_their_step(tmp_path):
    lines = [ev(4, 1.0), ev(8, 0.9)]
    read = run_printing(tmp_path, "read", *lines, reads={4: range(EVAL_SIZE), 8: range(25)})
    unread = run_printing(tmp_path, "unread", *lines, reads={4: range(EVAL_SIZE)})
    assert verdicts(during_checks(read, 8, 4))["during.evals_every_e"]
    checks = during_checks(unread, 8, 4)
    assert not verdicts(checks)["during.evals_every_e"]
    assert "never read at step {8: 25}" in checks[1]["detail"]

"""How the rounds' launches are built (no runs): grader.launch_for is the one builder the DDP
round, the evaluation prompt and the preemption prompt share. A relaunch uses the checkpoint dir
of the run it continues, named by a digest only; the round's arguments come first; the
preemption prompt's SIGTERM fault is on its preempted launches only, the first rank drawn from
the seed."""

from __future__ import annotations

from pathlib import Path

from trainer_lab.grading.contract import LAUNCHES
from trainer_lab.grading.grader import to_launch as ddp_launch
from trainer_lab.grading.prompts import evaluation, preemption
from trainer_lab.usercode import protocol


def test_a_relaunch_continues_in_the_checkpoint_dir_of_the_run_it_continues(tmp_path: Path):
    script = tmp_path / "workspace" / "train.py"
    plans = preemption.launch_plans()
    launches = {n: preemption.to_launch(plans[n], script, tmp_path, 7) for n in plans}
    assert launches["requeue"].ckpt_dir == launches["term"].ckpt_dir
    assert launches["requeue-again"].ckpt_dir == launches["term-again"].ckpt_dir
    dirs = {launches[n].ckpt_dir for n in ("straight", "term", "term-late", "term-again")}
    assert len(dirs) == 4 and all("term" not in d.name for d in dirs)
    assert launches["term"].args == (
        "--steps", "12", "--ckpt-dir", str(launches["term"].ckpt_dir), "--ckpt-every", "4",
    )  # fmt: skip
    eval_plans = evaluation.launch_plans(7)
    resume = evaluation.to_launch(eval_plans["best-eval"], eval_plans, script, tmp_path, 7)
    kill = evaluation.to_launch(eval_plans["kill"], eval_plans, script, tmp_path, 7)
    assert resume.ckpt_dir == kill.ckpt_dir  # two relaunches down the chain
    assert resume.args[-3:] == ("--eval-every", str(evaluation.EVAL_EVERY), "--eval-only")
    ddp_resume = ddp_launch(LAUNCHES["resume"], script, tmp_path, 30, seed=7)
    ddp_killed = ddp_launch(LAUNCHES[LAUNCHES["resume"].continues], script, tmp_path, 30, seed=7)
    assert ddp_resume.ckpt_dir == ddp_killed.ckpt_dir
    assert ddp_resume.ckpt_dir.parent == resume.ckpt_dir.parent == tmp_path / "ckpt"


def test_the_sigterm_fault_is_on_the_preempted_launches_only(tmp_path: Path):
    script = tmp_path / "train.py"
    plans = preemption.launch_plans()
    env = {n: preemption.to_launch(plans[n], script, tmp_path, 7).faults.env() for n in plans}
    assert env["straight"] == env["requeue"] == env["requeue-again"] == {}
    assert env["term"] == {
        protocol.TERM_AFTER_ENV: str(preemption.TERM_AFTER),
        protocol.TERM_FIRST_ENV: "1",
    }
    assert env["term-again"] == {**env["term"], protocol.TERM_AGAIN_ENV: "1"}
    # the stop phase's second run: the other rank first, the late one only after step N + 2
    assert env["term-late"] == {
        protocol.TERM_AFTER_ENV: str(preemption.TERM_AFTER),
        protocol.TERM_FIRST_ENV: "0",
        protocol.TERM_LATE_BY_ENV: "2",
    }
    again = preemption.to_launch(plans["term-again"], script, tmp_path, 2).faults.env()
    assert again[protocol.TERM_FIRST_ENV] == "0"  # seed 2: rank 0 first

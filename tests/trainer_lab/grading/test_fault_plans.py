"""A grading's fault plan is drawn from its seed (contract.fault_plan): the same seed, the same
kills; every plan resumes at a two-digit checkpoint step mid-epoch; the killed rank and the rank
whose save is torn alone vary. Pure functions and files written by hand: no run."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from trainer_lab.grading import grade
from trainer_lab.grading.contract import (
    BATCH_SIZE,
    CKPT_EVERY,
    DATASET_SIZE,
    KILL_STEPS,
    LAUNCHES,
    RESTART_STEPS,
    TEAR_AFTER,
    fault_launches,
    fault_plan,
)
from trainer_lab.grading.grader import extra_tears, launches_for
from trainer_lab.grading.outcome import Grading
from trainer_lab.result import read_result
from trainer_lab.usercode import protocol

SEEDS = range(300)


def test_the_same_seed_draws_the_same_plan_and_none_draws_a_fresh_seed():
    assert fault_plan(1234) == fault_plan(1234)
    assert len({fault_plan(seed) for seed in SEEDS}) > 4  # the seed matters
    fresh = {fault_plan().seed for _ in range(20)}
    assert len(fresh) > 1
    assert all(isinstance(seed, int) and seed >= 0 for seed in fresh)


def test_every_plan_resumes_at_a_two_digit_step_that_a_string_sort_does_not_pick():
    for seed in SEEDS:
        plan = fault_plan(seed)
        saved = list(range(CKPT_EVERY, plan.resume_step + 1, CKPT_EVERY))
        names = [f"ckpt_{step}" for step in saved]
        assert plan.resume_step >= 10, plan
        assert plan.resume_step == saved[-1] and plan.kill_after < RESTART_STEPS
        assert max(names) != f"ckpt_{plan.resume_step}", plan  # sorted(os.listdir()) is wrong


def test_every_plan_resumes_mid_epoch_so_an_epoch_started_over_replays_samples():
    steps_per_epoch_w2 = DATASET_SIZE // 2 // BATCH_SIZE
    for seed in SEEDS:
        assert fault_plan(seed).resume_step % steps_per_epoch_w2 != 0


def test_the_killed_rank_the_kill_step_and_the_rank_torn_alone_vary():
    plans = [fault_plan(seed) for seed in SEEDS]
    assert {p.kill_rank for p in plans} == {0, 1}
    assert {p.kill_after for p in plans} == set(KILL_STEPS)
    assert {p.tear_rank for p in plans} == {0, 1}
    assert {p.tear_after for p in plans} == {TEAR_AFTER}


def test_a_plan_sets_the_kill_and_the_tear_of_the_launches():
    plan = next(fault_plan(s) for s in SEEDS if fault_plan(s).kill_rank == 0)
    launches = fault_launches(plan)
    assert launches["kill"].kill == (0, plan.kill_after)
    assert launches["tear"].tear_after_step == plan.tear_after
    assert launches["tear"].tear_rank is None  # the first tear hits every rank's save
    assert {n: p for n, p in launches.items() if n not in ("kill", "tear")} == {
        n: p for n, p in LAUNCHES.items() if n not in ("kill", "tear")
    }
    chosen = {p.name: p for p in launches_for(["restart", "torn"], plan)}
    assert chosen["kill"].kill == (0, plan.kill_after)
    # the uninterrupted run and the runs compared with it train for the same steps
    assert {chosen[n].steps for n in ("w2", "kill", "resume", "tear", "tear-resume")} == {
        RESTART_STEPS
    }


def _run_with_saves(tmp_path: Path, writes: dict[int, int], step: int) -> SimpleNamespace:
    """A finished W=2 run whose ranks wrote writes[rank] files in the save after `step`."""
    observe = tmp_path / "observe"
    observe.mkdir(parents=True)
    for rank in (0, 1):
        records = [
            {"event": "write", "path": f"r{rank}-{i}.pt", "pstep": step}
            for i in range(writes.get(rank, 0))
        ]
        records.append({"event": "write", "path": "later.pt", "pstep": step + CKPT_EVERY})
        text = "".join(json.dumps(r) + "\n" for r in records)
        (observe / protocol.saves_file(rank)).write_text(text)
    return SimpleNamespace(observe_dir=observe, ranks=lambda: [0, 1])


def _tears(plans) -> list[tuple[str, int, int | None]]:
    return [(p.name, p.tear_write, p.tear_rank) for p in plans if p.continues is None]


def test_a_save_every_rank_writes_is_also_torn_on_the_plans_rank_alone(tmp_path):
    for tear_rank in (0, 1):
        plan = next(fault_plan(s) for s in SEEDS if fault_plan(s).tear_rank == tear_rank)
        run = _run_with_saves(tmp_path / str(tear_rank), {0: 1, 1: 1}, plan.tear_after)
        plans = extra_tears({"w2": run}, ["torn"], plan)  # type: ignore[dict-item]
        assert _tears(plans) == [("tear-1", 1, tear_rank)]
        resume = next(p for p in plans if p.continues == "tear-1")
        assert resume.name == "tear-1-resume" and resume.steps == RESTART_STEPS


def test_the_lone_tear_hits_a_rank_that_does_not_commit_the_save(tmp_path):
    """Rank 0 commits (a file event more than rank 1's): the lone tear takes rank 1's file,
    whatever rank the plan drew, so a commit that does not wait for its peers marks a torn save
    complete (the red team's wrong_marker_before_peers_done passed when rank 0 was drawn)."""
    for tear_rank in (0, 1):
        plan = next(fault_plan(s) for s in SEEDS if fault_plan(s).tear_rank == tear_rank)
        run = _run_with_saves(tmp_path / str(tear_rank), {}, plan.tear_after)
        step = plan.tear_after
        events = {  # each rank writes its file; rank 0 also commits (an empty marker)
            0: [("write", "r0.pt"), ("create", "COMPLETE")],
            1: [("write", "r1.pt")],
        }
        for rank, made in events.items():
            records = [{"event": e, "path": f, "pstep": step} for e, f in made]
            text = "".join(json.dumps(r) + "\n" for r in records)
            (run.observe_dir / protocol.saves_file(rank)).write_text(text)
        plans = extra_tears({"w2": run}, ["torn"], plan)  # type: ignore[dict-item]
        assert _tears(plans) == [("tear-1", 1, 1)]


def test_a_save_one_rank_writes_gets_no_tear_of_a_rank_alone(tmp_path):
    plan = next(fault_plan(s) for s in SEEDS if fault_plan(s).tear_rank == 1)
    one_file = _run_with_saves(tmp_path / "one", {0: 1}, plan.tear_after)
    assert extra_tears({"w2": one_file}, ["torn"], plan) == []  # type: ignore[dict-item]
    # three files on rank 0: the 2nd and 3rd are torn there (rank 1 writes none to tear)
    three = _run_with_saves(tmp_path / "three", {0: 3}, plan.tear_after)
    plans = extra_tears({"w2": three}, ["torn"], plan)  # type: ignore[dict-item]
    assert _tears(plans) == [("tear-2", 2, 0), ("tear-3", 3, 0)]


def test_the_seed_is_in_the_result_and_an_old_result_has_none(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("for x in:\n")  # not compiled: no run, the seed is still recorded
    grading = grade(script, tmp_path / "out", ("skeleton",), seed=4321)
    assert grading.seed == 4321
    assert read_result(tmp_path / "out")["seed"] == 4321  # type: ignore[typeddict-item]
    drawn = grade(script, tmp_path / "fresh", ("skeleton",))
    assert isinstance(drawn.seed, int)
    old = {key: value for key, value in grading.result.items() if key != "seed"}
    assert Grading(old, tmp_path / "out").seed is None  # type: ignore[arg-type]

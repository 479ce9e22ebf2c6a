"""The checks on hand-written evidence (no process runs): each verdict and its evidence text."""

from __future__ import annotations

from tests.support.script_runs import fake_run, write_stdout
from trainer_lab.grading.checks_monitoring import monitoring_checks
from trainer_lab.grading.checks_restart import single_writer
from trainer_lab.grading.checks_run import (
    exactly_once,
    new_order,
    params_in_sync,
    rank0_prints,
)
from trainer_lab.usercode.harness import ScriptLaunch


def fetched(ids: list[int]) -> list[dict]:
    return [{"pstep": 0, "id": i} for i in ids]


def test_every_id_once_per_epoch_across_ranks(tmp_path):
    halves = {
        "fetch-rank0.jsonl": fetched(list(range(0, 48, 2)) * 2),
        "fetch-rank1.jsonl": fetched(list(range(1, 48, 2)) * 2),
    }
    ok, detail = exactly_once(fake_run(tmp_path, 2, halves))
    assert ok and detail == "2 epochs, each id exactly once across ranks"
    ok, detail = new_order(fake_run(tmp_path, 2, halves))
    assert not ok and detail.startswith("epochs 0 and 1 fetched the same order on every rank")


def test_both_ranks_reading_the_same_half_is_caught(tmp_path):
    same = {
        "fetch-rank0.jsonl": fetched(list(range(24))),
        "fetch-rank1.jsonl": fetched(list(range(24))),
    }
    ok, detail = exactly_once(fake_run(tmp_path, 2, same))
    assert not ok
    assert detail.startswith(
        "epoch 0: 24 ids fetched more than once, 24 never; id 0 went to ranks [0, 1]; "
        "expected each id once per epoch across ranks; likely cause: the sampler is not sharded"
    )


def test_fewer_than_one_epoch_is_not_a_pass(tmp_path):
    ok, detail = exactly_once(fake_run(tmp_path, 2, {"fetch-rank0.jsonl": fetched([1, 2])}))
    assert not ok and detail.startswith("fewer than one epoch fetched")


def test_two_ranks_renaming_onto_one_path_are_two_writers(tmp_path):
    events = {
        "saves-rank0.jsonl": [
            {"event": "rename", "src": ".a.tmp-1", "path": "step-4.pt", "pstep": 4}
        ],
        "saves-rank1.jsonl": [
            {"event": "rename", "src": ".a.tmp-2", "path": "step-4.pt", "pstep": 4}
        ],
    }
    verdict = single_writer(fake_run(tmp_path, 2, events))
    assert not verdict["passed"]
    assert "step-4.pt by ranks [0, 1]" in verdict["detail"]


def test_no_checkpoint_at_all_fails_single_writer(tmp_path):
    verdict = single_writer(fake_run(tmp_path, 2, {}))
    assert verdict == {
        "name": "restart.single_writer",
        "passed": False,
        "detail": "no checkpoint file was written into --ckpt-dir",
    }


def test_phases_must_be_three_and_add_up(tmp_path):
    run = fake_run(tmp_path, 2, {})
    good = {"phases": {"data": 0.1, "fwd": 0.2, "bwd": 0.65}, "step_time": 1.0}
    write_stdout(run, 0, [{"step": 1, "loss": 1.0, **good}])
    write_stdout(run, 1, [])
    named, adds = monitoring_checks(run)
    assert named["passed"] and adds["passed"], (named, adds)
    assert adds["detail"] == "phases add up to 95.0% of the step time over 1 steps (worst step 95%)"
    assert rank0_prints(run) == (True, "rank 0 printed 1 step lines, the other ranks none")

    write_stdout(
        run, 0, [{"step": 1, "loss": 1.0, "phases": {"data": 0.1, "fwd": 0.5}, "step_time": 1.0}]
    )
    named, adds = monitoring_checks(run)
    assert not named["passed"] and not adds["passed"]
    assert adds["detail"].startswith("phases add up to 60.0% of the step time")


def stepped(digests: list[str], sharded: bool = False) -> list[dict]:
    post = [{"digest": d, "sample": [float(i)], "sharded": sharded} for i, d in enumerate(digests)]
    return [{"pstep": i + 1, "post": p} for i, p in enumerate(post)]


def test_ranks_with_different_parameters_are_out_of_sync(tmp_path):
    steps = {"steps-rank0.jsonl": stepped(["a", "b"]), "steps-rank1.jsonl": stepped(["a", "c"])}
    ok, detail = params_in_sync(fake_run(tmp_path, 2, steps))
    assert not ok and detail.startswith("after step 2 rank 1's parameters differ from rank 0's")


def test_sharded_parameters_are_not_compared_across_ranks(tmp_path):
    shards = {
        "steps-rank0.jsonl": stepped(["a", "b"], sharded=True),
        "steps-rank1.jsonl": stepped(["x", "y"], sharded=True),
    }
    ok, detail = params_in_sync(fake_run(tmp_path, 2, shards))
    assert ok and "sharded (DTensor)" in detail
    shards["steps-rank1.jsonl"] = stepped(["x"], sharded=True)
    ok, detail = params_in_sync(fake_run(tmp_path, 2, shards))
    assert not ok and detail == "ranks made different numbers of optimizer steps: {0: 2, 1: 1}"


def test_an_abort_after_the_script_returned_or_in_destroy_is_the_runtimes(tmp_path):
    from trainer_lab.usercode.evidence import teardown_aborts

    observe = tmp_path / "observe"
    observe.mkdir()
    (observe / "end-rank0.json").write_text('{"code": 0}')
    dump = "Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n"
    (observe / "crash-rank1-9.txt").write_text(dump + '  File "c10d.py", line 1 in barrier\n')
    assert teardown_aborts(observe, [0, 1]) is None  # rank 1 aborted mid-script: its failure
    (observe / "crash-rank1-9.txt").write_text(
        dump + '  File "c10d.py", line 1 in destroy_process_group\n'
    )
    note = teardown_aborts(observe, [0, 1])
    assert note is not None and note.startswith("rank 1 inside destroy_process_group aborted")
    (observe / "saves-rank1.jsonl").write_text('{"event": "killed", "pstep": 3}\n')
    assert teardown_aborts(observe, [0, 1]) is None  # an injected fault is never excused


def test_a_phase_without_optimizer_steps_fails_each_check_keeping_what_it_saw():
    from trainer_lab.grading.grader import gate, likely_causes
    from trainer_lab.usercode.verdict import check

    why = "no optimizer step seen (single exited 0 without one); likely cause: no torch.optim step"
    checks = [
        check("skeleton.exits", True, "exit 0 in 1.0 s"),
        check("skeleton.loss_falls", False, "loss 1 -> 1; likely cause: the learning rate"),
    ]
    gated = gate(checks, why)
    assert [c["passed"] for c in gated] == [False, False]
    assert gated[0]["detail"] == (
        "no optimizer step seen (single exited 0 without one); observed: exit 0 in 1.0 s; "
        "likely cause: no torch.optim step"
    )
    assert "observed: loss 1 -> 1; likely cause: no torch.optim step" in gated[1]["detail"]
    assert likely_causes(gated) == ["no torch.optim step"]  # what was observed is no cause


def test_a_hung_run_gives_one_likely_cause_and_no_stray_ones(tmp_path):
    """The checks quote a stalled run's summary mid-detail: what follows it there is no cause;
    the stall's own cause comes first, once."""
    from trainer_lab.grading.checks_run import distributed_checks
    from trainer_lab.grading.grader import hang_causes, likely_causes
    from trainer_lab.usercode.stall import Stall

    runs = {}
    for world in (2, 3):
        run = fake_run(tmp_path / f"w{world}", world, {})
        run.status, run.stall = "timeout", Stall(8.0, 8.0, True, world, {0: 4})
        runs[f"w{world}"] = run
    one = fake_run(tmp_path / "one", 0, {})
    checks = distributed_checks([runs["w2"], runs["w3"]], one)
    assert all(not c["passed"] for c in checks)
    assert all("W=2: hang: no rank made progress for 8 s" in c["detail"] for c in checks)
    assert likely_causes(checks) == []
    assert hang_causes(runs) == [runs["w2"].stall.likely_cause()]


def test_a_cause_named_at_each_world_size_is_listed_once_and_alone(tmp_path):
    """Without set_epoch new_order fails at W=2 and at W=3: its detail names the cause twice;
    the likely causes hold it once, and none of the W=3 evidence."""
    from trainer_lab.grading.checks_run import distributed_checks
    from trainer_lab.grading.contract import DATASET_SIZE
    from trainer_lab.grading.grader import likely_causes

    runs = []
    for world in (2, 3):
        shards = {
            f"fetch-rank{r}.jsonl": fetched(list(range(r, DATASET_SIZE, world)) * 2)
            for r in range(world)
        }
        runs.append(fake_run(tmp_path / f"w{world}", world, shards))
    checks = {c["name"]: c for c in distributed_checks(runs, runs[0])}
    detail = checks["distributed.new_order"]["detail"]
    assert detail.count("likely cause: sampler.set_epoch(epoch)") == 2
    assert likely_causes(list(checks.values())) == [
        "sampler.set_epoch(epoch) is not called before each epoch"
    ]


def test_why_a_phase_fails_as_a_whole_is_recorded_as_a_shared_reason(tmp_path):
    from trainer_lab.grading.contract import OTHER_DATA
    from trainer_lab.grading.grader import judge_phase

    runs = {}
    for name in ("single", OTHER_DATA):
        run = fake_run(tmp_path / name, 0, {})
        run.launch = ScriptLaunch(
            name, tmp_path / "train.py", ("--steps", "4"), 0, tmp_path / name, tmp_path, 10
        )
        runs[name] = run
    shared: list[str] = []
    checks = judge_phase("skeleton", runs, None, shared)
    assert shared == [
        "no optimizer step seen (single exited 0 without one); expected a torch.optim optimizer "
        "step per training step (the contract: the grader watches them)"
    ]
    assert all(c["detail"].startswith(f"{shared[0]}; observed: ") for c in checks)

"""The coding round's check facts (trainer_lab.grading.facts): what every check carries as data
beside its detail, derived where the grader writes the detail (no process runs)."""

from __future__ import annotations

from tests.support.script_runs import fake_run, write_stdout
from trainer_lab.grading.checks_monitoring import monitoring_checks
from trainer_lab.grading.checks_restart import resume_facts
from trainer_lab.grading.facts import causes_in, evidence_facts, with_evidence_facts
from trainer_lab.grading.grader import gate, not_run
from trainer_lab.usercode.verdict import check


def test_a_failed_world_size_is_quoted_without_its_causes():
    detail = (
        "W=2: 4 epochs, each id exactly once across ranks; W=3: ids [1, 2] read twice; expected "
        "each id once per epoch across ranks; likely cause: the sampler is not sharded; "
        "the ranks read the same order"
    )
    facts = evidence_facts(check("distributed.exactly_once", False, detail))
    assert facts["evidence"] == (
        "W=3: ids [1, 2] read twice; expected each id once per epoch across ranks"
    )
    assert facts["causes"] == ["the sampler is not sharded", "the ranks read the same order"]
    assert (facts["hang"], facts["not_run"], facts["no_optimizer_step"]) == (False, False, False)


def test_a_held_check_names_no_cause_and_a_hang_is_quoted_without_its_explanation():
    assert evidence_facts(check("x.y", True, "ok; likely cause: none"))["causes"] == []
    hang = (
        "hang: no rank made progress for 8 s, killed after 8 s (rank 0: in barrier); expected an "
        "optimizer step at least every 8 s; probably the ranks wait for each other"
    )
    facts = evidence_facts(check("skeleton.exits", False, hang))
    assert facts["hang"] is True
    assert (
        facts["evidence"]
        == "hang: no rank made progress for 8 s, killed after 8 s (rank 0: in barrier)"
    )
    deadline = evidence_facts(check("skeleton.exits", False, "deadline: killed after 90 s"))
    assert deadline["hang"] is True


def test_causes_are_read_per_torn_file_each_once():
    detail = "a; likely cause: torn taken | b; likely cause: torn taken; more evidence"
    assert causes_in(detail) == ["torn taken", "more evidence"]


def test_what_the_check_builder_set_wins_over_the_derived_facts():
    built = check("x.y", False, "seen; likely cause: c", {"evidence": "own", "rank": 1})
    facts = with_evidence_facts(built)["facts"]
    assert (facts["evidence"], facts["rank"], facts["causes"]) == ("own", 1, ["c"])


def test_a_gated_or_skipped_phase_says_so_in_its_facts():
    why = "no optimizer step seen (w2 exited 0); expected a step; likely cause: no torch.optim step"
    seen = check("skeleton.exits", True, "exit 0", {"optimizer_steps": 0})
    (gated,) = gate([seen], why)
    assert gated["facts"] == {
        "optimizer_steps": 0,
        "no_optimizer_step": True,
        "evidence": "no optimizer step seen (w2 exited 0); expected a step",
        "causes": ["no torch.optim step"],
    }
    assert all(c["facts"] == {"not_run": True} for c in not_run("torn", "the w2 run failed"))


def test_named_phases_carries_the_phase_names(tmp_path):
    run = fake_run(tmp_path, 2, {})
    good = {"phases": {"data": 0.01, "fwd": 0.01, "bwd": 0.01}, "step_time": 0.03}
    write_stdout(run, 0, [{"step": 1, "loss": 1.0, **good}])
    named, _ = monitoring_checks(run)
    assert named["facts"] == {"phases": ["bwd", "data", "fwd"]}
    two = {"phases": {"data": 0.01, "compute": 0.02}, "step_time": 0.03}
    write_stdout(run, 0, [{"step": 1, "loss": 1.0, **two}])
    named, _ = monitoring_checks(run)
    assert not named["passed"] and named["facts"] == {"phases": ["data", "compute"]}


def test_a_resume_is_described_as_data(tmp_path):
    u_steps = [
        {"pstep": i, "pre": {"digest": f"d{i - 1}"}, "post": {"digest": f"d{i}"}}
        for i in (1, 2, 3, 4)
    ]
    saves = [
        {"event": "save", "path": "ckpt-2.pt", "pstep": 2},
        {"event": "write", "path": "tmp-4", "pstep": 4},
        {"event": "rename", "src": "tmp-4", "path": "ckpt-4.pt", "pstep": 4},
    ]
    files = {"steps-rank0.jsonl": u_steps, "saves-rank0.jsonl": saves}
    reference = fake_run(tmp_path / "u", 0, files)
    r_steps = [{"pstep": 1, "pre": {"digest": "d2"}, "post": {"digest": "d3"}}]
    relaunch = fake_run(tmp_path / "r", 0, {"steps-rank0.jsonl": r_steps})
    (tmp_path / "r" / "stdout.log").write_text('{"step": 3, "loss": 1.0}\n')
    assert resume_facts(reference, reference, relaunch) == {
        "resumed_after": 2,
        "first_step_line": 3,
        "checkpoint_writes": [
            {"path": "ckpt-2.pt", "step": 2},
            {"path": "ckpt-4.pt", "step": 4},
        ],
        "made_no_step": False,
    }
    stepless = fake_run(tmp_path / "s", 0, {})
    facts = resume_facts(reference, reference, stepless)
    assert (facts["resumed_after"], facts["made_no_step"]) == (None, True)


def test_a_grading_writes_every_checks_facts_into_its_result(tmp_path):
    from trainer_lab.grading import grade
    from trainer_lab.result import read_result

    script = tmp_path / "train.py"
    script.write_text("def broken(:\n")
    grading = grade(script, tmp_path / "out", ("skeleton",))
    stored = read_result(tmp_path / "out")
    assert stored is not None and stored["checks"] == grading.checks
    for c in stored["checks"]:
        assert c["facts"]["not_run"] is True and c["facts"]["causes"] == []
        assert c["facts"]["evidence"].startswith("not run: train.py:1:")

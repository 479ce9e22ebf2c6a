"""A graded run's lab result, as the grader and the exercise runner both build it."""

from __future__ import annotations

import time

from trainer_lab.result import read_result
from trainer_lab.usercode.verdict import begin, check, finish, not_compiled, write_workspace


def test_a_file_that_does_not_compile_fails_every_check_and_is_written(tmp_path):
    result = begin("exercise:x", {"file": "f.py"}, 2, tmp_path)
    assert result["env"]["backend"] == "gloo"
    not_compiled(result, ["a", "b"], "f.py:1: SyntaxError: invalid syntax")
    done = finish(result, tmp_path, time.monotonic(), {"likely_causes": []})
    assert done["status"] == "failed"
    assert [c["detail"] for c in done["checks"]] == [
        "not run: f.py:1: SyntaxError: invalid syntax"
    ] * 2
    assert done["observations"] == {
        "syntax_error": "f.py:1: SyntaxError: invalid syntax",
        "checks_passed": 0,
        "checks_total": 2,
        "likely_causes": [],
    }
    assert read_result(tmp_path) == done


def test_ok_only_when_every_check_held_and_a_cancelled_run_stays_cancelled(tmp_path):
    result = begin("lab", {}, 0, tmp_path)
    assert result["env"]["backend"] is None  # one plain process
    result["checks"] = [check("a", True, "x"), check("b", True, "y")]
    assert finish(result, tmp_path, time.monotonic())["status"] == "ok"
    result["checks"].append(check("c", 0, "z"))  # type: ignore[arg-type]
    assert result["checks"][-1]["passed"] is False
    assert finish(result, tmp_path, time.monotonic())["status"] == "failed"
    result["status"] = "cancelled"
    assert finish(result, tmp_path, time.monotonic())["status"] == "cancelled"


def test_the_workspace_holds_the_texts_and_copies_of_the_given_files(tmp_path):
    given = tmp_path / "given.py"
    given.write_text("X = 1\n")
    write_workspace(tmp_path / "ws", {"train.py": "print(1)\n"}, [given])
    assert (tmp_path / "ws" / "train.py").read_text() == "print(1)\n"
    assert (tmp_path / "ws" / "given.py").read_text() == "X = 1\n"


def test_a_reason_several_checks_quote_is_given_once_with_the_checks_it_affects():
    from tests.support.coding import HANG, hung_grading
    from trainer_lab.usercode.verdict import shared_reasons

    reasons, checks = shared_reasons(hung_grading())
    assert [(r.label, r.text) for r in reasons] == [("reason 1", f"run w2: {HANG}")]
    assert reasons[0].affects == (
        "affects 3 checks: distributed.exactly_once, distributed.new_order, monitoring.named_phases"
    )
    assert [c["detail"] for c in checks] == [
        "exit 0 in 1.0 s",
        "W=2: reason 1; no ids",
        "W=2: reason 1",
        "no step lines (reason 1)",
    ]


def test_a_phase_failing_as_a_whole_is_one_reason_and_a_lone_quote_stays_in_place():
    from trainer_lab.usercode.verdict import shared_reasons

    why = "no optimizer step seen (single exited 0 without one); expected a torch.optim step"
    result = {
        "checks": [
            check("skeleton.exits", False, f"{why}; observed: exit 0; likely cause: no optim"),
            check("skeleton.loss_falls", False, f"{why}; observed: 1 -> 1; likely cause: no optim"),
            check("restart.resumes", False, "error: rank 0: ValueError: bad checkpoint file"),
        ],
        "launches": [
            {"name": "resume", "status": "error", "summary": "error: rank 0: ValueError: bad"},
        ],
        "observations": {"shared_reasons": [why]},
    }
    reasons, checks = shared_reasons(result)
    assert [(r.text, r.checks) for r in reasons] == [
        (why, ("skeleton.exits", "skeleton.loss_falls"))
    ]
    assert checks[0]["detail"] == "reason 1; observed: exit 0; likely cause: no optim"
    assert checks[2]["detail"] == "error: rank 0: ValueError: bad checkpoint file"


def test_launches_that_hung_alike_but_for_their_seconds_are_one_reason():
    """A hang at W=2 stops w2, kill and tear, each after its own seconds: one reason, naming
    the runs, replaces every quote."""
    from tests.support.coding import HANG
    from trainer_lab.usercode.verdict import shared_reasons

    later = HANG.replace("after 13 s", "after 14 s")
    result = {
        "launches": [
            {"name": name, "status": "timeout", "summary": text, "root_cause": {"kind": "hang"}}
            for name, text in (("kill", later), ("tear", later), ("w2", HANG))
        ],
        "checks": [
            check("distributed.exactly_once", False, f"W=2: {HANG}"),
            check("restart.resumes_at_checkpoint", False, f"planned fault: {later}"),
            check("torn.finishes", False, f"tear: {later}"),
        ],
    }
    reasons, checks = shared_reasons(result)
    assert [(r.label, r.text) for r in reasons] == [("reason 1", f"runs kill, tear, w2: {later}")]
    assert reasons[0].checks == (
        "distributed.exactly_once",
        "restart.resumes_at_checkpoint",
        "torn.finishes",
    )
    assert [c["detail"] for c in checks] == [
        "W=2: reason 1",
        "planned fault: reason 1",
        "tear: reason 1",
    ]

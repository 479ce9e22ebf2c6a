"""A coding round on a chosen prompt (drill.mock.coding.catalogue): its starter, dataset module,
time table and contract; the prompt kept in state.json so a resumed round keeps it (an old round
without one is DDP's); the clock rules grade that prompt's phases; the follow-ups come from that
prompt's table; `drill mock coding/notebook --prompt` and the suggestion by readiness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drill.cli.main import main
from drill.mock.clock import PhaseAdvanced
from drill.mock.coding.catalogue import EVAL_FOLLOWUPS, EVAL_PHASES, catalogue, round_prompt
from drill.mock.coding.followup_table import FAILED, WHAT_IF
from drill.mock.coding.notebook import extract_train_py, find_train_cell
from drill.mock.coding.pushback import choose_followups
from drill.mock.coding.rules import Grade, Pushback, RoundConductor
from drill.mock.coding.session import CODING_PHASES, CodingSession
from drill.mock.coding.suggest import NO_READINESS, suggest_prompt
from drill.mock.errors import MockError
from drill.plan.readiness import TopicReadiness
from tests.support.followups import fixture
from trainer_lab.grading import model_answer_source, starter_source
from trainer_lab.grading.prompts import PROMPT_IDS

EVAL = round_prompt("eval")


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exited:
        return int(exited.code or 0)


def eval_grading(failed: dict[str, str]) -> dict[str, Any]:
    """An evaluation-round grading as result.json holds it: every check of the prompt, those in
    `failed` failed with that detail (written by hand, as checks_eval.py words them)."""
    checks = [
        {"name": name, "passed": name not in failed, "detail": failed.get(name, "held")}
        for phase in EVAL.phases
        for name in EVAL.check_names[phase]
    ]
    return {"lab": "mock-coding-eval", "status": "failed", "observations": {}, "checks": checks}


# --- the round on disk ---------------------------------------------------------------------------
def test_a_round_on_the_eval_prompt_holds_its_starter_data_and_time_table(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", prompt="eval")
    assert session.code() == EVAL.starter() != starter_source()
    assert (session.folder / "drill_data.py").read_text() == EVAL.dataset()
    assert session.phases == EVAL_PHASES
    assert session.clock.total_budget_s == EVAL.minutes * 60
    assert session.all_grader_phases == ("exact", "during", "best")


def test_a_resumed_round_keeps_its_prompt(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", minutes=9, prompt="eval")
    session.save(code="x = 1\n")
    again = CodingSession.latest(tmp_path / "rounds")
    assert again is not None
    assert again.prompt.id == "eval" and again.phases == EVAL_PHASES
    assert again.clock.total_budget_s == 9 * 60  # scaled on the eval round's 45 minutes
    assert json.loads((session.folder / "state.json").read_text())["prompt"] == "eval"


def test_a_round_file_without_a_prompt_is_the_ddp_round(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    (session.folder / "state.json").write_text('{"scale": 1.0}')  # written before the catalogue
    again = CodingSession(session.folder)
    assert again.prompt.id == "ddp" and again.phases == CODING_PHASES


def test_an_unknown_prompt_is_a_one_line_error_and_no_round(tmp_path):
    with pytest.raises(MockError, match="unknown prompt 'fsdp9'; prompts: ddp, eval"):
        CodingSession.create(tmp_path / "rounds", prompt="fsdp9")
    assert not (tmp_path / "rounds").exists() or not list((tmp_path / "rounds").iterdir())
    session = CodingSession.create(tmp_path / "rounds")
    (session.folder / "state.json").write_text('{"prompt": "fsdp9"}')  # a newer drill's round
    with pytest.raises(MockError, match="unknown prompt"):
        CodingSession(session.folder)
    # listed nowhere, offered for no resume (history, stats and `m` keep working)
    from drill.mock.coding.past import coding_history

    assert CodingSession.latest_unfinished(tmp_path / "rounds") is None
    assert coding_history(tmp_path / "rounds") == []


def test_a_notebook_round_on_the_eval_prompt(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", notebook=True, prompt="eval")
    assert session.notebook_path is not None
    assert extract_train_py(session.notebook_path) == EVAL.starter()
    cells = json.loads(session.notebook_path.read_text())["cells"]
    by_id = {cell["id"]: "".join(cell["source"]) for cell in cells}
    assert "eval_step" in by_id["contract"]  # the eval prompt's contract, not DDP's
    assert "--eval-every 4" in by_id["run"]
    assert "Exact metrics over a sharded eval set (12 min)" in by_id["phase-exact"]
    assert "--eval-only at W=1, 2 and 3" in by_id["phase-exact"]  # its "How it is graded" lines
    assert "### Best checkpoint across restarts" in by_id["notes"]
    assert session.notes() == ""  # the template alone says nothing


# --- the clock rules -----------------------------------------------------------------------------
def test_the_clock_rules_grade_the_eval_prompts_phases(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", prompt="eval")
    rules = RoundConductor(session)
    session.clock.start()
    assert rules.grade_now() == Grade(("exact",))  # clarify checks nothing: the first phase's
    effects = rules.react([PhaseAdvanced(1, 2, "auto")])  # "exact" ran out
    assert Grade(("exact",)) in effects
    session.clock.state.phase = EVAL.pushback_index
    effects = rules.react([PhaseAdvanced(EVAL.pushback_index - 1, EVAL.pushback_index, "auto")])
    assert Pushback(("exact", "during", "best")) in effects


def test_the_grader_is_told_the_rounds_prompt(tmp_path):
    calls: list[dict[str, Any]] = []

    def grade(script: Path, out_dir: Path, phases: tuple[str, ...], **options: Any) -> None:
        calls.append(options)

    ddp = CodingSession.create(tmp_path / "rounds")
    ddp.grader(grade)(ddp.script, tmp_path, ("skeleton",))
    evaluation = CodingSession.create(tmp_path / "rounds", prompt="eval")
    evaluation.grader(grade)(evaluation.script, tmp_path, ("exact",))
    assert calls == [{}, {"prompt": "eval"}]  # a DDP round calls it as before


# --- the follow-ups ------------------------------------------------------------------------------
def test_two_rounds_on_different_prompts_ask_different_follow_ups(tmp_path):
    ddp = CodingSession.create(tmp_path / "rounds")
    evaluation = CodingSession.create(tmp_path / "rounds", prompt="eval")
    wrong_count = "count 26 at W=2, expected 25: a padded duplicate was counted"
    asked_ddp = choose_followups(ddp, fixture("model-answer"), model_answer_source(), 1)
    asked_eval = choose_followups(
        evaluation,
        eval_grading({"exact.count_is_eval_size": wrong_count}),
        EVAL.entry.model_answer(),
        1,
    )
    ddp_ids = {q["id"] for q in asked_ddp}
    eval_ids = {q["id"] for q in asked_eval}
    assert ddp_ids.isdisjoint(eval_ids)
    eval_table = {t.id for t in (*EVAL_FOLLOWUPS.failed.values(), *EVAL_FOLLOWUPS.what_if.values())}
    assert eval_ids <= eval_table
    assert ddp_ids <= {t.id for t in (*FAILED.values(), *WHAT_IF.values())}
    first = asked_eval[0]
    assert first["id"] == "eval-count" and wrong_count in first["question"]
    # kept for the resume: the resumed eval round asks the same questions
    assert CodingSession(evaluation.folder).pushback == asked_eval


# --- the command line ----------------------------------------------------------------------------
def test_drill_mock_notebook_on_a_prompt_and_an_unknown_one(drill_home, capsys):
    assert exit_code(["mock", "notebook", "--prompt", "fsdp9"]) == 2
    err = capsys.readouterr().err
    known = ", ".join(PROMPT_IDS)  # every prompt of the catalogue, ddp first
    assert err.strip().splitlines() == [f"drill: error: unknown prompt 'fsdp9'; prompts: {known}"]
    assert not (drill_home / "rounds").exists() or not list((drill_home / "rounds").iterdir())

    assert exit_code(["mock", "notebook", "--prompt", "eval"]) == 0
    out = capsys.readouterr().out
    assert "--prompt eval" in out  # the grade line grades it as the eval prompt
    session = CodingSession(drill_home / "rounds" / "1")
    assert session.prompt.id == "eval"
    assert session.notebook_path is not None
    assert find_train_cell(session.notebook_path).source == EVAL.starter()


def test_drill_mock_coding_with_an_unknown_prompt_is_one_line(drill_home, capsys):
    assert exit_code(["mock", "coding", "--prompt", "nope"]) == 2
    assert exit_code(["mock", "--prompt", "nope"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"drill: error: unknown prompt 'nope'; prompts: {', '.join(PROMPT_IDS)}"] * 2
    assert exit_code(["mock", "--prompt", "eval", "talk"]) == 2  # a talk round has no prompt


# --- the suggestion ------------------------------------------------------------------------------
def topic(tag: str, recall: float, introduced: int = 3) -> TopicReadiness:
    return TopicReadiness(tag, "tag", 5, introduced, recall, {}, (0, 0), (0, 0), {})


def test_the_suggestion_is_the_prompt_whose_topics_are_weakest():
    prompts = catalogue()
    assert suggest_prompt(prompts, None).prompt_id is None
    unseen = [topic(t, 0.0, introduced=0) for t in ("ddp", "evaluation", "metrics")]
    assert suggest_prompt(prompts, unseen).why == NO_READINESS
    strong_eval = [topic("ddp", 0.3), topic("sampler", 0.4), topic("evaluation", 0.9),
                   topic("metrics", 0.8), topic("checkpoint", 0.6)]  # fmt: skip
    suggestion = suggest_prompt(prompts, strong_eval)
    assert suggestion.prompt_id == "ddp"
    assert suggestion.why.startswith("Suggested: DDP training pipeline: its topics (ddp, ")
    assert "Distributed evaluation 68%" in suggestion.why and "\n" not in suggestion.why
    weak_eval = [topic("ddp", 0.9), topic("evaluation", 0.1), topic("metrics", 0.2)]
    assert suggest_prompt(prompts, weak_eval).prompt_id == "eval"


# --- drill mock watch ----------------------------------------------------------------------------
def test_watch_on_an_eval_round_keeps_its_time_table_and_grades_its_phases(tmp_path):
    from drill.mock.coding.watch import RoundWatch
    from tests.support.clocks import FakeClock

    clock = FakeClock()
    calls: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def grade(script: Path, out_dir: Path, phases: tuple[str, ...], **options: Any) -> dict:
        calls.append((tuple(phases), options))
        return {"checks": [{"name": f"{p}.x", "passed": True, "detail": "held"} for p in phases]}

    session = CodingSession.create(tmp_path / "rounds", prompt="eval", now=clock)
    watch = RoundWatch(session, grade=session.grader(grade))
    lines = watch.start()
    assert "Prompt: Distributed evaluation (drill mock contract --prompt eval)" in lines
    assert watch.status_line().startswith("Phase 1/5 Clarify assumptions · 5:00 left · total 45:00")
    clock.advance(5 * 60 + 12 * 60 + 1)  # clarify and "exact" ran out
    watch.step()
    assert watch.status_line().startswith("Phase 3/5 Eval during training")
    assert calls == [(("exact",), {"prompt": "eval"})]


def test_drill_mock_followups_asks_from_the_prompts_table(
    drill_home, monkeypatch, tmp_path, capsys
):
    from drill.cli import mock_grade

    calls: list[dict[str, Any]] = []
    failed = {"best.survives_restart": "expected step 8, loss 0.6; the relaunch printed step 12"}

    def grade(script: Path, out_dir: Path, phases: Any, **options: Any) -> dict:
        calls.append(options)
        return eval_grading(failed)

    monkeypatch.setattr(mock_grade, "grade_script", grade)
    script = tmp_path / "train.py"
    script.write_text(EVAL.entry.model_answer())
    assert exit_code(["mock", "followups", str(script), "--prompt", "eval", "--json"]) == 0
    asked = json.loads(capsys.readouterr().out)["followups"]
    assert calls[0]["prompt"] == "eval"
    assert (
        asked[0]["id"] == "eval-best-restart"
        and failed["best.survives_restart"] in (asked[0]["question"])
    )


def test_drill_mock_list_names_the_other_prompts(capsys):
    assert exit_code(["mock", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "· --prompt eval: Distributed evaluation (45 min)" in lines[2]
    assert lines[2].count("--prompt ") == len(PROMPT_IDS) - 1  # every prompt but today's

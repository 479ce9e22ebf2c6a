"""`m` offers the coding round on each prompt of the catalogue (title, round length) with a
suggestion line; picking the evaluation prompt starts a round with its contract and starter,
graded as that prompt, and the round keeps its prompt when resumed."""

from __future__ import annotations

from textual.widgets import OptionList, Static

from drill.mock.coding.catalogue import round_prompt
from drill.mock.coding.session import CodingSession, default_rounds_dir
from drill.mock.coding.suggest import NO_READINESS
from drill.tui.screens import coding_round
from drill.tui.screens.coding_round import CodingRoundScreen
from drill.tui.screens.mock_picker import MockPickerScreen
from tests.support.pilot import run_async, until
from trainer_lab.result import new_result, write_result

EVAL = round_prompt("eval")


def static_text(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


@run_async
async def test_m_picks_the_eval_prompt_and_the_round_shows_its_contract_and_starter(
    make_app, monkeypatch
) -> None:
    graded: list[dict] = []

    def fake_grade(script, out_dir, phases, **options):
        graded.append({"phases": tuple(phases), **options})
        result = new_result("mock-coding-eval", {}, 2, out_dir)
        write_result(out_dir, result)
        return result

    monkeypatch.setattr(coding_round, "grade", fake_grade)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, MockPickerScreen))
        await pilot.app.workers.wait_for_complete()  # the suggestion's worker
        await pilot.pause()
        options = app.screen.query_one("#rounds", OptionList)
        label = str(options.get_option("coding:new:eval").prompt)
        assert label.startswith("Coding round: Distributed evaluation (45 min)")
        assert "DDP training pipeline (55 min)" in str(options.get_option("coding:new").prompt)
        assert static_text(app, "#picker-suggest") == NO_READINESS  # nothing reviewed yet

        options.highlighted = options.get_option_index("coding:new:eval")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CodingRoundScreen))
        screen = app.screen
        assert screen.session.prompt.id == "eval"
        assert "eval_step" in static_text(app, "#contract-text")  # the eval contract
        assert screen.query_one("#editor").text == EVAL.starter()
        assert static_text(app, "#phase-name") == "Phase 1/5: Clarify assumptions"
        await pilot.press("ctrl+r")  # grades the first phase that checks something: "exact"
        await until(pilot, lambda: bool(graded) and not screen.grading)
        assert graded[0]["phases"] == ("exact",) and graded[0]["prompt"] == "eval"
        app.pop_screen()  # leave it unfinished: `m` offers it back, named by its prompt
        await pilot.pause()
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, MockPickerScreen))
        options = app.screen.query_one("#rounds", OptionList)
        assert str(options.get_option("resume:coding").prompt) == (
            "Resume interrupted coding round #1 (Distributed evaluation)"
        )
    resumed = CodingSession.latest_unfinished(default_rounds_dir())
    assert resumed is not None and resumed.prompt.id == "eval"


@run_async
async def test_the_picker_suggests_the_prompt_whose_topics_are_weakest(
    make_app, monkeypatch
) -> None:
    from drill.plan.readiness import Readiness, TopicReadiness
    from drill.services import Services

    def tag(name: str, recall: float) -> TopicReadiness:
        return TopicReadiness(name, "tag", 5, 5, recall, {}, (0, 0), (0, 0), {})

    topics = [tag("ddp", 0.9), tag("sampler", 0.8), tag("evaluation", 0.2), tag("metrics", 0.3)]
    monkeypatch.setattr(Services, "readiness", lambda self: Readiness(None, None, topics, []))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, MockPickerScreen))
        await until(pilot, lambda: app.screen.suggested is not None)
        line = static_text(app, "#picker-suggest")
        assert line.startswith("Suggested: Distributed evaluation: its topics (evaluation, ")
        options = app.screen.query_one("#rounds", OptionList)
        assert str(options.get_option("coding:new:eval").prompt).endswith("· suggested")
        assert not str(options.get_option("coding:new").prompt).endswith("· suggested")

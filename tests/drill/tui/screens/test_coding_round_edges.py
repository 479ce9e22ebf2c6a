"""The coding screen's rough edges, each as the user meets it: escape leaves (the clock paused,
and said so); ending early asks first; after the end the footer shows what still works; the
header never reads 0:00 while time is left; the total clock is whole at 80x24; the editor
soft-wraps and f5 gives the focused pane the whole screen; train.py saved from outside is
picked up (reloaded, or the user chooses when the editor has unsaved edits); the phase ends keep
the code as it stood."""

from __future__ import annotations

import os

from drill.mock.clock import Status
from drill.mock.coding.session import CodingSession
from drill.tui.screens.browser_dialogs import ConfirmScreen
from drill.tui.screens.coding_round import CodingApp, CodingRoundScreen, remaining
from tests.support.clocks import FakeClock
from tests.support.pilot import HostApp, Notices, run_async, screen_text, text_of, until
from tests.support.services import app_slot


def footer_of(app) -> str:
    return screen_text(app).splitlines()[-1]


def test_time_left_is_rounded_up_so_0_00_means_none_is_left():
    assert remaining(0.4) == "0:01"
    assert remaining(59.2) == "1:00"
    assert remaining(3300) == "55:00"
    assert remaining(0) == "0:00" and remaining(-3) == "0:00"


@run_async
async def test_escape_leaves_the_round_with_its_clock_paused_and_says_so(tmp_path):
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    notices = Notices()
    app = HostApp(CodingRoundScreen(session, app_slot()))
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await pilot.pause()
        clock.advance(30)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CodingRoundScreen)
        assert app.dismissed == [None]
    assert any("paused and saved" in m and "drill mock resume" in m for m in notices.messages())
    again = CodingSession(session.folder)
    assert again.clock.status is Status.PAUSED and again.clock.total_used_s() == 30


@run_async
async def test_escape_ends_the_standalone_coding_app(tmp_path):
    app = CodingApp(CodingSession.create(tmp_path / "rounds"), app_slot())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("escape")
        await pilot.pause()
        assert app.return_code == 0 and not app.is_running


@run_async
async def test_ending_early_asks_first_and_no_keeps_the_round_going(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", now=FakeClock())
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f10")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await until(pilot, lambda: "End the round now, with 55:00 left?" in screen_text(app))
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, CodingRoundScreen) and not session.finished
        await pilot.press("f10", "y")
        await pilot.pause()
        assert session.finished and session.clock.state.finish_reason == "ended"


@run_async
async def test_after_the_end_the_footer_shows_the_keys_that_still_work(tmp_path, monkeypatch):
    from drill.tui.screens import coding_round
    from trainer_lab.result import new_result

    monkeypatch.setattr(
        coding_round, "grade", lambda s, out, phases, cancel: new_result("mock-coding", {}, 2, out)
    )
    app = CodingApp(CodingSession.create(tmp_path / "rounds"), app_slot())
    async with app.run_test(size=(80, 24)) as pilot:
        during = footer_of(app)
        await pilot.press("f10", "y")
        await until(pilot, lambda: not app.screen.grading)
        after = footer_of(app)
        header = screen_text(app).splitlines()[0]
    assert "Next phase" in during and "End" in during and "Model answer" not in during
    assert "f5 Zoom" in during and "esc Leave" in during  # zoom: the focused pane, full screen
    assert "f4 Model answer" in after and "f8 Report" in after and "Grade" in after
    assert "Next phase" not in after and "Pause" not in after
    assert "Round over" in header and "0:00" not in header


@run_async
async def test_the_header_shows_a_second_left_and_the_whole_total_at_80_columns(tmp_path):
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        assert "Total 55:00 left" in header and "Phase 5:00" in header
        session.clock.advance()
        session.clock.advance()
        session.clock.advance()
        session.clock.advance()  # into the last phase: 15:00 left
        clock.advance(15 * 60 - 0.4)
        app.screen.tick_now()
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        assert not session.finished
        assert "Total 0:01 left" in header, header


@run_async
async def test_the_editor_soft_wraps_and_f5_gives_the_focused_pane_then_the_verdicts_the_screen(
    tmp_path,
):
    app = CodingApp(CodingSession.create(tmp_path / "rounds"), app_slot())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        editor, notes = screen.query_one("#editor"), screen.query_one("#notes")
        assert editor.soft_wrap
        wide = editor.region.width
        editor.load_text("x = '" + "a" * 150 + "'  # the end of a long line\n")
        await pilot.press("f5")
        await pilot.pause()
        assert not screen.query_one("#left").display
        assert editor.region.width > wide and editor.region.width >= 76
        assert "the end of a long line" in screen_text(app)  # wrapped, not cut off
        await pilot.press("f5")  # then the verdicts alone (Textual's maximize)
        await pilot.pause()
        assert screen.maximized is screen.query_one("#verdicts")
        assert screen.query_one("#verdicts").region.height >= 20
        await pilot.press("f5")  # then the split again
        await pilot.pause()
        assert screen.maximized is None
        assert screen.query_one("#left").display and editor.region.width == wide
        notes.focus()
        await pilot.press("f5")
        await pilot.pause()
        assert not screen.query_one("#right").display and notes.region.width >= 76


@run_async
async def test_a_save_from_outside_is_reloaded_when_the_editor_has_no_unsaved_edits(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    notices = Notices()
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await pilot.pause()
        session.script.write_text("print('from my IDE')\n")
        app.screen.tick_now()
        await pilot.pause()
        assert app.screen.query_one("#editor").text == "print('from my IDE')\n"
        assert "train.py changed on disk: reloaded." in notices.messages()


@run_async
async def test_a_save_from_outside_over_unsaved_edits_lets_the_user_choose(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    notices = Notices()
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        editor = app.screen.query_one("#editor")
        editor.load_text("print('typed here')\n")  # not saved yet
        session.script.write_text("print('from my IDE')\n")
        app.screen.autosave()  # the autosave must not overwrite the outside change
        assert session.script.read_text() == "print('from my IDE')\n"
        assert editor.text == "print('typed here')\n"
        await pilot.pause()
        assert any("ctrl+l loads the file" in m for m in notices.messages("warning"))
        app.screen.autosave()
        assert session.script.read_text() == "print('from my IDE')\n"
        await pilot.press("ctrl+s")  # keep the editor's
        assert session.script.read_text() == "print('typed here')\n"
        session.script.write_text("print('outside again')\n")
        stat = session.script.stat()
        os.utime(session.script, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        editor.load_text("print('typed again')\n")
        app.screen.tick_now()
        await pilot.press("ctrl+l")  # take the file's
        assert editor.text == "print('outside again')\n"


@run_async
async def test_each_phase_end_snapshots_the_code(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one("#editor")
        editor.load_text("# clarified\n")
        await pilot.press("f3")
        editor.load_text("# skeleton written\n")
        await pilot.press("f3")
        await until(pilot, lambda: text_of(pilot, "#phase-name").startswith("Phase 3/5"))
    assert session.phase_code("clarify") == "# clarified\n"
    assert session.phase_code("skeleton") == "# skeleton written\n"
    assert session.phase_code("distributed") is None


@run_async
async def test_f8_after_the_end_shows_the_report_per_phase(tmp_path, monkeypatch):
    from drill.tui.screens import coding_round
    from drill.tui.screens.coding_report import CodingReportScreen
    from trainer_lab.result import new_result

    monkeypatch.setattr(
        coding_round, "grade", lambda s, out, phases, cancel: new_result("mock-coding", {}, 2, out)
    )
    session = CodingSession.create(tmp_path / "rounds")
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f3")
        app.screen.query_one("#editor").load_text("print('at the end')\n")
        await pilot.press("f10", "y")
        await until(pilot, lambda: not app.screen.grading)
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, CodingReportScreen))
        text = app.screen.markdown
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, CodingRoundScreen)
    assert "## Clarify assumptions" in text and "## Distributed lift" in text
    skeleton = text.split("## Config, dataset, single-process skeleton")[1].split("\n## ")[0]
    assert "Your code when the phase ended:\n\n```python\nprint('at the end')\n```" in skeleton
    assert "The model answer's part:" in skeleton

"""Stretch phases on the coding screen: started (f9) once the round is over, or chosen (f9) during
it and then started in that order as it ends; each on its own 10-minute clock (scaled like the
round) with its own contract, graded with its own checks on ctrl+r and when its time
is up; a resume mid-stretch goes on with its clock paused."""

from __future__ import annotations

from drill.mock.coding.session import CodingSession
from drill.mock.coding.stretch import remaining_phases
from drill.tui.screens import coding_round
from drill.tui.screens.coding_round import CodingApp
from drill.tui.screens.coding_stretch import StretchPickScreen
from tests.support.clocks import FakeClock
from tests.support.pilot import run_async, screen_text, text_of, until
from tests.support.services import app_slot
from trainer_lab.result import new_result


def recording_grader(graded: list[tuple[str, ...]]):
    def grade(script, out_dir, phases, cancel):
        graded.append(tuple(phases))
        return new_result("mock-coding", {}, 2, out_dir)

    return grade


@run_async
async def test_after_the_round_f9_starts_a_stretch_phase_graded_by_its_own_checks(
    tmp_path, monkeypatch
):
    graded: list[tuple[str, ...]] = []
    monkeypatch.setattr(coding_round, "grade", recording_grader(graded))
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f9")  # during the round: only chooses for later (escape: none)
        await until(pilot, lambda: isinstance(app.screen, StretchPickScreen))
        assert app.screen.chosen == []
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, StretchPickScreen))
        assert app.screen.stretch is None
        await pilot.press("f10", "y")
        await until(pilot, lambda: not app.screen.grading)
        assert "f9 Stretch" in screen_text(app).splitlines()[-1]
        await pilot.press("f9")
        await until(pilot, lambda: isinstance(app.screen, StretchPickScreen))
        await pilot.press("enter")  # the first: gradient accumulation
        await until(pilot, lambda: app.screen.stretch is not None)
        header = screen_text(app).splitlines()[0]
        assert "Stretch: Gradient accumulation with no_sync" in header and "10:00 left" in header
        assert "--accum-steps K" in " ".join(text_of(pilot, "#contract-text").split())
        footer = screen_text(app).splitlines()[-1]
        assert "f10 End" in footer and "Model answer" not in footer and "Stretch" not in footer
        await pilot.press("ctrl+r")
        await until(pilot, lambda: len(graded) == 2 and not app.screen.grading)
        clock.advance(600)  # its ten minutes are up: its checks run, and it is done
        app.screen.tick_now()
        await until(pilot, lambda: len(graded) == 3 and not app.screen.grading)
        assert app.screen.stretch is None
        assert "Round over" in screen_text(app).splitlines()[0]
    assert graded == [
        ("skeleton", "distributed", "restart", "torn", "monitoring"),
        ("accum",),
        ("accum",),
    ]
    assert remaining_phases(CodingSession(session.folder)) == ["amp", "fsdp2", "throughput"]


@run_async
async def test_a_round_left_mid_stretch_resumes_in_it(tmp_path, monkeypatch):
    monkeypatch.setattr(coding_round, "grade", recording_grader([]))
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    session.clock.finish()
    session.save()
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f9")
        await until(pilot, lambda: isinstance(app.screen, StretchPickScreen))
        await pilot.press("down", "enter")  # autocast and a loss scaler
        await until(pilot, lambda: app.screen.stretch is not None)
        clock.advance(125)
        await pilot.press("escape")  # leaves, the stretch clock paused
    resumed = CodingSession(session.folder, now=FakeClock())
    app = CodingApp(resumed, app_slot())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        assert "Stretch: Autocast and a loss scaler" in header and "7:55 left" in header
        assert "PAUSED" in header


@run_async
async def test_stretch_phases_chosen_during_the_round_run_after_it_in_that_order(
    tmp_path, monkeypatch
):
    graded: list[tuple[str, ...]] = []
    monkeypatch.setattr(coding_round, "grade", recording_grader(graded))
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f9")  # during the round: choose up front
        await until(pilot, lambda: isinstance(app.screen, StretchPickScreen))
        assert "run in the order chosen" in screen_text(app)
        await pilot.press("down", "down", "enter")  # DDP to FSDP2 first
        await until(pilot, lambda: not isinstance(app.screen, StretchPickScreen))
        await pilot.press("f9")
        await until(pilot, lambda: isinstance(app.screen, StretchPickScreen))
        assert "1. DDP to FSDP2" in screen_text(app)
        await pilot.press("enter")  # then gradient accumulation
        await until(pilot, lambda: not isinstance(app.screen, StretchPickScreen))
        assert app.screen.stretch is None  # nothing runs before the round ends
        await pilot.press("f10", "y")
        await until(pilot, lambda: app.screen.stretch is not None)
        assert "Stretch: DDP to FSDP2" in screen_text(app).splitlines()[0]
        await until(pilot, lambda: not app.screen.grading)
        clock.advance(601)
        app.screen.tick_now()
        await until(pilot, lambda: app.screen.stretch is not None and not app.screen.grading)
        assert "Stretch: Gradient accumulation" in screen_text(app).splitlines()[0]
        clock.advance(601)
        app.screen.tick_now()
        await until(pilot, lambda: app.screen.stretch is None and not app.screen.grading)
    assert graded[1:] == [("fsdp2",), ("accum",)]
    assert remaining_phases(CodingSession(session.folder)) == ["amp", "throughput"]


@run_async
async def test_the_stretch_picker_shows_the_scaled_minutes_of_a_scaled_round(tmp_path, monkeypatch):
    monkeypatch.setattr(coding_round, "grade", recording_grader([]))
    session = CodingSession.create(tmp_path / "rounds", minutes=11, now=FakeClock())
    session.clock.finish()
    session.save()
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f9")
        await until(pilot, lambda: isinstance(app.screen, StretchPickScreen))
        text = screen_text(app)
        assert "Stretch phase: 2 minutes each" in text and "10 minutes" not in text


def test_minutes_label_reads_whole_and_odd_minutes():
    from drill.tui.screens.coding_stretch import minutes_label

    assert minutes_label(1.0) == "10 minutes"
    assert minutes_label(0.1) == "1 minute"
    assert minutes_label(0.25) == "2 min 30 s"
    assert minutes_label(0.05) == "30 s"

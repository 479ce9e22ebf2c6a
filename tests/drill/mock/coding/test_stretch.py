"""Stretch phases after a coding round (drill.mock.coding.stretch): each on its own 10-minute
clock, saved in the round's state so a resume goes on, done once ended (with the code as it
stood), and in the report with its checks and the model answer's walk-through."""

from __future__ import annotations

from drill.mock.clock import Status
from drill.mock.coding.report import build_report, to_markdown
from drill.mock.coding.session import CodingSession
from drill.mock.coding.stretch import Stretch, remaining_phases, stretch_phases
from tests.support.clocks import FakeClock
from trainer_lab.grading import LAB
from trainer_lab.result import new_result, write_result


def test_a_stretch_phase_runs_ten_minutes_and_a_resume_goes_on(tmp_path):
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    assert stretch_phases() == ("accum", "amp", "fsdp2", "throughput")
    stretch = Stretch.start(session, "accum")
    assert stretch.clock.total_budget_s == 600
    clock.advance(90)
    stretch.clock.tick()
    stretch.save()

    again = Stretch.current(CodingSession(session.folder, now=FakeClock()))
    assert again is not None and again.phase_id == "accum"
    assert again.clock.total_used_s() == 90 and again.clock.status is Status.PAUSED
    assert remaining_phases(again.session) == ["accum", "amp", "fsdp2", "throughput"]

    again.session.save(code="# accumulated\n")
    again.end()
    after = CodingSession(session.folder)
    assert Stretch.current(after) is None
    assert remaining_phases(after) == ["amp", "fsdp2", "throughput"]
    assert after.phase_code("accum") == "# accumulated\n"


def test_the_report_shows_a_stretch_phase_with_its_checks_and_walkthrough(tmp_path):
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    session.clock.finish()
    stretch = Stretch.start(session, "amp")
    clock.advance(240)
    stretch.clock.tick()
    stretch.end()
    out = session.folder / "grades" / "1"
    result = new_result(LAB, {}, 1, out)
    result["checks"] = [{"name": "amp.loss_scaled", "passed": False, "detail": "no scaler seen"}]
    write_result(out, result)

    report = build_report(session)
    amp = report.phases[-1]
    assert (amp.title, amp.phase_id, round(amp.used_s), amp.budget_s) == (
        "Stretch: Autocast and a loss scaler",
        "amp",
        240,
        600,
    )
    assert [c["name"] for c in amp.checks] == ["amp.loss_scaled"]
    assert all(not p.checks for p in report.phases[:-1])  # not filed under a round phase
    md = to_markdown(report)
    section = md.split("## Stretch: Autocast and a loss scaler (4:00 of 10:00)")[1]
    assert "- [ ] `amp.loss_scaled`: no scaler seen" in section
    assert "The scaler multiplies the loss before backward" in section
    assert "GradScaler" in section  # the stretch phase's model answer


def test_stretch_phases_chosen_up_front_are_kept_in_order_and_survive_a_resume(tmp_path):
    from drill.mock.coding.stretch import choose, chosen, next_chosen, parse_choice, toggle_chosen

    assert parse_choice("fsdp2, ACCUM,fsdp2") == ["fsdp2", "accum"]
    for bad in ("fsdp3", "", " , "):
        try:
            parse_choice(bad)
        except ValueError as error:
            assert "fsdp3" in str(error) or "at least one" in str(error)
        else:
            raise AssertionError(f"{bad!r} was accepted")
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    choose(session, ["fsdp2", "accum"])
    session.save()
    again = CodingSession(session.folder, now=clock)
    assert chosen(again) == ["fsdp2", "accum"] and next_chosen(again) == "fsdp2"
    assert not again.in_stretch  # chosen is not started
    stretch = Stretch.start(again, "fsdp2")
    stretch.end()  # the phase's own record keeps the choice
    after = CodingSession(session.folder)
    assert chosen(after) == ["fsdp2", "accum"] and next_chosen(after) == "accum"
    assert toggle_chosen(after, "fsdp2") == ["accum"]
    assert toggle_chosen(after, "amp") == ["accum", "amp"]


def test_a_stretch_phase_in_a_scaled_round_runs_scaled_minutes(tmp_path):
    session = CodingSession.create(tmp_path / "rounds", minutes=11, now=FakeClock())
    assert Stretch.start(session, "amp").clock.total_budget_s == 120  # 10 min x 11/55

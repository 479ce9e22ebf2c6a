"""A coding round on disk: created from the starter, saved atomically, resumed with its clock;
a damaged state file does not stop a resume."""

from __future__ import annotations

from drill.mock.clock import Status
from drill.mock.coding import starter_source
from drill.mock.coding.session import CODING_PHASES, CodingSession
from tests.support.clocks import FakeClock


def test_a_new_round_holds_the_starter_and_the_dataset_module(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    assert session.round_id == 1
    assert session.code() == starter_source()
    assert (session.folder / "drill_data.py").exists()
    assert CodingSession.create(tmp_path / "rounds").round_id == 2


def test_code_notes_and_clock_survive_a_restart(tmp_path):
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", minutes=11, now=clock)
    session.clock.start()
    clock.advance(90)
    session.clock.tick()
    session.save(code="print(1)\n", notes="ask about GPUs")

    again = CodingSession.latest(tmp_path / "rounds", now=FakeClock())
    assert again is not None
    assert again.code() == "print(1)\n" and again.notes() == "ask about GPUs"
    assert again.clock.total_used_s() == 90
    assert again.clock.status is Status.PAUSED  # a resumed round waits for F2
    assert again.clock.total_budget_s == 11 * 60
    assert again.phase == CODING_PHASES[1]  # clarify had 60 of the 11 minutes: 90 s moved on
    assert not list(again.folder.glob(".*.tmp"))


def test_a_damaged_state_file_restarts_only_the_clock(tmp_path):
    session = CodingSession.create(tmp_path / "rounds")
    session.save(code="x = 1\n")
    (session.folder / "state.json").write_text('{"clock": {"phase": "nope"}}')
    again = CodingSession(session.folder)
    assert again.code() == "x = 1\n"
    assert again.clock.total_used_s() == 0

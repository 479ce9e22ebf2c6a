"""`drill mock watch`: the loop over drill.mock.coding.watch with its seams (the clock's time
source, the wait between polls, the grader) replaced, so a 55-minute round runs in no time;
ctrl+c is a
KeyboardInterrupt raised from the wait, as the terminal delivers it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drill.cli import mock_watch
from drill.cli.main import main
from drill.mock.clock import Status
from drill.mock.coding.session import CodingSession, default_rounds_dir
from tests.support.clocks import FakeClock

README = Path(__file__).resolve().parents[3] / "README.md"


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exited:
        return int(exited.code or 0)


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(mock_watch, "NOW", fake)
    return fake


@pytest.fixture
def graded(monkeypatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []

    def grade(script, out_dir, phases):
        calls.append(phases)
        return {"checks": [{"name": f"{p}.ok", "passed": True, "detail": "ran"} for p in phases]}

    monkeypatch.setattr(mock_watch, "_grade", grade)
    return calls


def test_ctrl_c_pauses_saves_and_names_the_resume_command(drill_home, clock, graded, monkeypatch,
                                                         capsys):  # fmt: skip
    CodingSession.create(default_rounds_dir(), notebook=True)
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        clock.advance(60)
        if len(waits) == 6:  # six minutes in: past clarify, into the skeleton phase
            raise KeyboardInterrupt

    monkeypatch.setattr(mock_watch, "SLEEP", sleep)
    assert main(["mock", "watch"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Started coding round 1: ")
    assert "round.ipynb" in out[1]  # a notebook round watches its notebook
    # not a terminal: plain lines, one per change of the minute
    assert "Phase 1/5 Clarify assumptions · 5 min left · total 55 min left" in out
    assert "Phase 1/5 Clarify assumptions · 4 min left · total 54 min left" in out
    assert "Phase 1 ended: Clarify assumptions" in out
    assert out[-1] == "Resume with: drill mock watch 1"
    assert out[-2].startswith("Paused and saved at: Phase 2/5 ")
    assert graded == []  # clarify has no checks
    saved = CodingSession(default_rounds_dir() / "1")
    assert saved.clock.status is Status.PAUSED and saved.clock.total_used_s() == 360

    # the named command goes on from there, and the README lists it
    monkeypatch.setattr(mock_watch, "SLEEP", lambda s: clock.advance(600))
    assert main(["mock", "watch", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Resumed coding round 1")
    assert graded[0] == ("skeleton",) and graded[-1][0] == "skeleton" and len(graded[-1]) == 5
    assert out.splitlines()[-1] == "Report: drill mock report coding 1 --md"
    assert out.splitlines().count("Round over (time)") == 1
    assert "drill mock watch" in README.read_text()


def test_watch_errors_are_one_line(drill_home, capsys):
    finished = CodingSession.create(default_rounds_dir())
    finished.clock.start()
    finished.clock.finish()
    finished.save()
    for argv, message in [
        (["mock", "watch"], "no unfinished coding round to watch; start one with"),
        (["mock", "watch", "7"], "no coding round with id 7"),
        (["mock", "watch", "x"], "round id must be a number"),
        (["mock", "watch", "1"], "coding round 1 is over; see `drill mock report coding 1`"),
        (["mock", "watch", "1", "2"], "unrecognized arguments: 2"),
    ]:
        assert exit_code(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_resume_line_names_a_command_the_readme_lists():
    names = ("mock_watch.py", "mock.py", "mock_coding.py")
    sources = [Path(mock_watch.__file__).with_name(name) for name in names]
    commands = {
        m.group(1).split("{")[0].strip()
        for source in sources
        for m in re.finditer(r"Resume with: (drill mock [a-z ]+)", source.read_text())
    }
    assert commands == {"drill mock watch", "drill mock resume", "drill mock coding resume"}
    readme = README.read_text()
    for command in commands:
        assert f"{command} " in readme or f"{command}`" in readme, command

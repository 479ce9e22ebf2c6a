from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from drill.cli.main import main
from drill.mock.round import MockRun
from tests.support.clocks import FakeClock
from tests.support.mock_rounds import CARDS, open_store, tiny_round
from trainer_lab.grading import CHECK_NAMES


@pytest.fixture
def clock() -> FakeClock:
    """A mock round's monotonic clock, moved by hand."""
    return FakeClock()


def graded_round(home, clock) -> int:
    from drill.decks.loader import load_decks
    from drill.mock.feedback import review_rater

    store = open_store(home / "drill.sqlite3")
    try:
        run = MockRun.start_new(store, tiny_round(), CARDS, rng=random.Random(0), now=clock)
        run.start()
        run.set_answer(run.prompts[0].id, "optimizer state, sampler position and RNG")
        run.set_answer(run.prompts[1].id, "no idea")  # answered, so its card is rated
        clock.advance(1000)
        run.tick()
        run.grade({}, rate=review_rater(store.db, load_decks([])))
        return run.round_id
    finally:
        store.db.close()


def test_report_history_and_markdown_export(drill_home, clock, capsys):
    round_id = graded_round(drill_home, clock)
    assert main(["mock", "history"]) == 0
    out = capsys.readouterr().out
    assert f"{round_id:>4}  2025-03-04 09:30  tiny       developing 60%" in out

    assert main(["mock", "report", str(round_id)]) == 0
    out = capsys.readouterr().out
    assert "Overall: developing (60%)" in out
    assert "Fed back to review:\n  push-" in out and ": new, not rated\n" in out

    assert main(["mock", "report", str(round_id), "--md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith(f"# Mock round {round_id}: Tiny round\n")
    assert "- [x] RNG state" in md


def test_list_shows_the_bundled_rounds(capsys):
    assert main(["mock", "list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("coding ")  # the standard round is the coding round
    assert out.splitlines()[3].startswith("quick ")
    assert "standard" in out and "55 min" in out


def exit_code(argv: list[str]) -> int:
    """main's return value, or argparse's exit status for a usage error it reports itself."""
    try:
        return main(argv)
    except SystemExit as exited:
        return int(exited.code or 0)


def test_usage_errors_are_one_line_and_exit_2(capsys):
    for argv, message in [
        (["mock", "report"], "usage: drill mock report [coding] ID [--md]"),
        (["mock", "report", "abc"], "round id must be a number"),
        (["mock", "report", "7"], "no mock round with id 7"),
        (["mock", "nosuch"], "unknown round 'nosuch'"),
        (["mock", "list", "--md"], "drill mock list: error: unrecognized arguments: --md"),
        (["mock", "resume"], "no interrupted mock round to resume"),
        (["mock", "quick", "--minutes", "0"], "--minutes must be a positive number"),
        (["mock", "quick", "--minutes", "nan"], "--minutes must be a positive number, got nan"),
        (["mock", "quick", "--minutes", "inf"], "--minutes must be a positive number, got inf"),
        (["mock", "quick", "--minutes", "-3"], "--minutes must be a positive number, got -3"),
        (["mock", "grade"], "usage: drill mock grade FILE [--phase P] [--json]"),
        (["mock", "grade", "/no/such/train.py"], "no such file: /no/such/train.py"),
        (["mock", "grade", "x.py", "--phase", "warmup"], "unknown phase 'warmup'; phases:"),
        (["mock", "list", "--json"], "drill mock list: error: unrecognized arguments: --json"),
        (["mock", "report", "3", "--phase", "x"], "drill mock report: error: unrecognized arg"),
        (
            ["mock", "contract", "extra"],
            "drill mock contract: error: unrecognized arguments: extra",
        ),
        (["mock", "--minutes", "5", "list"], "--minutes only goes with starting a round"),
        (["mock", "coding", "--minutes", "5", "resume"], "--minutes only goes with starting"),
        (["mock", "resume", "x"], "round id must be a number, got 'x'"),
        (["mock", "quick", "--md"], "drill mock play: error: unrecognized arguments: --md"),
        (["mock", "coding", "resume"], "no coding round to resume; start one with"),
        (["mock", "coding", "resume", "9"], "no coding round with id 9"),
        (["mock", "coding", "now"], "drill mock coding: error: argument {resume}: invalid choice"),
        (["mock", "coding", "resume", "1", "2"], "unrecognized arguments: 2"),
        (["mock", "coding", "--minutes", "nan"], "--minutes must be a positive number, got nan"),
    ]:
        assert exit_code(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert len(err.strip().splitlines()) == 1
        assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "round_name", "minutes"),
    [
        (["mock", "talk"], "standard", None),
        (["mock", "play"], "standard", None),
        (["mock", "talk", "quick", "--minutes", "4"], "quick", 4.0),
        (["mock", "--minutes", "5", "talk"], "standard", 5.0),
        (["mock", "quick"], "quick", None),
        (["mock", "quick", "--minutes", "7"], "quick", 7.0),
        (["mock", "--minutes", "3", "quick"], "quick", 3.0),
        (["mock", "play", "rounds/round-x.yaml"], "rounds/round-x.yaml", None),
    ],
)
def test_a_word_that_is_no_command_is_the_round_to_play(monkeypatch, argv, round_name, minutes):
    from drill.cli import mock as mock_cli
    from drill.mock import launch

    started: list[tuple[str, float | None]] = []
    monkeypatch.setattr(
        launch,
        "start_round",
        lambda _store, _decks, name, m, _dirs: started.append((name, m)) or ("run", "rate"),
    )
    monkeypatch.setattr(mock_cli, "_play", lambda run, rate: 0)
    assert main(argv) == 0
    assert started == [(round_name, minutes)]


@pytest.mark.parametrize(
    ("command", "explains"),
    [
        (["play"], "ROUND"),
        (["resume"], "resume an interrupted round"),
        (["list"], "round definitions"),
        (["history"], "past rounds"),
        (["report"], "drill mock report coding ID"),
        (["grade"], "Exit 0 when every check holds"),
        (["contract"], "coding contract"),
        (["coding"], "ctrl+r"),
        (["coding", "resume"], "resume a coding round"),
    ],
)
def test_each_subcommand_has_its_help(capsys, command, explains):
    with pytest.raises(SystemExit) as exit_:
        main(["mock", *command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: drill mock {' '.join(command)} ")
    assert explains.lower() in " ".join(out.split()).lower()


@pytest.mark.parametrize("command", ["grade", "followups"])
def test_phase_help_names_each_prompts_phases(capsys, command):
    """--phase takes the chosen prompt's phases: the help lists them per prompt, not only the
    DDP round's."""
    from drill.mock.coding.catalogue import catalogue

    with pytest.raises(SystemExit):
        main(["mock", command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for prompt in catalogue():
        assert f"{prompt.id}: {', '.join(prompt.phases)}" in text, prompt.id


def test_mock_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit):
        main(["mock", "--help"])
    out = capsys.readouterr().out
    for command in ("play", "resume", "list", "history", "report", "grade", "contract", "coding"):
        assert f"\n    {command} " in out, command


def heavy_modules_after_import(module: str) -> list[str]:
    code = (
        f"import sys, json, {module}; "
        "print(json.dumps([m for m in ('torch', 'sqlmodel', 'textual') if m in sys.modules]))"
    )
    cmd = [sys.executable, "-c", code]
    result = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_mock_cli_imports_no_torch_sqlmodel_or_textual():
    assert heavy_modules_after_import("drill.cli.mock") == []
    # the domain (store included) is UI-free and torch-free
    assert heavy_modules_after_import("drill.mock.round") == ["sqlmodel"]


def test_contract_prints_the_contract_and_the_dataset_module(capsys):
    assert main(["mock", "contract"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Build a distributed training pipeline in one file, train.py.")
    assert "--- drill_data.py (the given dataset module; import it from train.py) ---" in out
    assert "class ToyDataset(Dataset):" in out


def test_grade_shows_a_syntax_error_with_file_and_line_and_exits_1(drill_home, tmp_path, capsys):
    script = tmp_path / "mine.py"
    script.write_text("import torch\n\ndef main(:\n    pass\n")
    assert main(["mock", "grade", str(script), "--phase", "skeleton"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  skeleton.exits       not run: train.py:3: SyntaxError: invalid syntax" in out
    assert "0/3 checks hold" in out
    assert str(drill_home / "runs" / "mock-coding-") in out


def test_a_grading_is_listed_in_the_lab_history(drill_home, tmp_path, capsys):
    from drill.database import open_app_database
    from drill.labs.overview import LabsOverview
    from drill.labs.runs import LabRuns

    script = tmp_path / "mine.py"
    script.write_text("def main(:\n")
    assert main(["mock", "grade", str(script), "--phase", "skeleton"]) == 1
    db = open_app_database()
    try:
        [record] = LabRuns(db).runs(lab="mock-coding")
        assert record.status == "failed"
        assert record.summary["failed_checks"] == list(CHECK_NAMES["skeleton"])
        assert record.load_result()["checks"][0]["detail"].startswith("not run: train.py:1:")
        rows = {row.name: row for row in LabsOverview(db=db).rows().value}
        assert rows["mock-coding"].runnable is False
        assert rows["mock-coding"].last == record.short()
    finally:
        db.close()


def test_grade_json_is_the_result_file(drill_home, tmp_path, capsys):
    script = tmp_path / "mine.py"
    script.write_text("for x in:\n")
    assert main(["mock", "grade", str(script), "--phase", "torn", "--json"]) == 1
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["lab"] == "mock-coding" and result["status"] == "failed"
    assert [c["name"] for c in result["checks"]] == [
        "torn.previous_checkpoint_used",
        "torn.finishes",
    ]
    assert captured.err == ""


@pytest.mark.lab
def test_grade_the_model_answer_skeleton_exits_0(drill_home, tmp_path, capsys):
    from trainer_lab.grading import model_answer_source

    script = tmp_path / "train.py"
    script.write_text(model_answer_source())
    assert main(["mock", "grade", str(script), "--phase", "skeleton"]) == 0
    out = capsys.readouterr().out
    assert "PASS  skeleton.loss_falls" in out and "3/3 checks hold" in out


def test_resume_without_id_finds_an_interrupted_coding_round(drill_home, monkeypatch, capsys):
    from drill.mock.coding.session import CodingSession, default_rounds_dir
    from drill.tui.screens import coding_round

    interrupted = CodingSession.create(default_rounds_dir())
    finished = CodingSession.create(default_rounds_dir())  # newer, but over: not resumable
    finished.clock.start()
    finished.clock.finish()
    finished.save()
    opened: list[int] = []
    monkeypatch.setattr(
        coding_round.CodingApp, "run", lambda self: opened.append(self.session.round_id)
    )
    assert main(["mock", "resume"]) == 0
    assert opened == [interrupted.round_id] == [1]
    assert "Resume with: drill mock coding resume 1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "minutes"), [(["mock"], 55.0), (["mock", "--minutes", "11"], 11.0)]
)
def test_mock_alone_starts_the_standard_round_which_is_the_coding_round(
    drill_home, monkeypatch, capsys, argv, minutes
):
    from drill.mock import launch
    from drill.tui.screens import coding_round

    monkeypatch.setattr(launch, "start_round", lambda *a: pytest.fail("a talk-only round started"))
    opened: list[tuple[int, float]] = []
    monkeypatch.setattr(
        coding_round.CodingApp,
        "run",
        lambda self: opened.append((self.session.round_id, self.session.clock.total_budget_s)),
    )
    assert main(argv) == 0
    assert opened == [(1, minutes * 60)]
    out = capsys.readouterr().out
    assert out.startswith("The standard round: the coding round")
    assert "drill mock talk (talk-only practice)" in out
    assert out.rstrip().endswith("Resume with: drill mock coding resume 1")


def test_mock_help_says_the_standard_round_is_the_coding_round(capsys):
    assert exit_code(["mock", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "`drill mock` alone starts the standard round, the coding round" in out
    assert "drill mock talk [ROUND] talk-only practice" in out
    assert exit_code(["mock", "talk", "--help"]) == 0
    assert "talk-only practice round" in capsys.readouterr().out


def test_a_notebook_round_takes_minutes(drill_home, capsys):
    from drill.mock.coding.session import CodingSession, default_rounds_dir

    assert main(["mock", "notebook", "--minutes", "11"]) == 0
    session = CodingSession(default_rounds_dir() / "1")
    assert session.notebook_path is not None and session.notebook_path.is_file()
    assert session.clock.total_budget_s == 11 * 60
    assert "drill mock watch 1" in capsys.readouterr().out
    assert exit_code(["mock", "notebook", "x.ipynb", "--minutes", "3"]) == 2
    assert "--minutes goes with a new round" in capsys.readouterr().err


def test_resume_offers_a_round_left_in_a_stretch_phase(drill_home, monkeypatch, capsys):
    from drill.mock.coding.session import CodingSession, default_rounds_dir
    from drill.mock.coding.stretch import Stretch
    from drill.tui.screens import coding_round

    session = CodingSession.create(default_rounds_dir())
    session.clock.start()
    session.clock.finish()
    stretch = Stretch.start(session, "amp")
    stretch.clock.pause()
    stretch.save()
    opened: list[tuple[int, bool]] = []
    monkeypatch.setattr(
        coding_round.CodingApp,
        "run",
        lambda self: opened.append((self.session.round_id, self.session.in_stretch)),
    )
    assert main(["mock", "resume"]) == 0
    assert opened == [(1, True)]
    assert "Resume with: drill mock coding resume 1" in capsys.readouterr().out


def test_mock_alone_says_its_intro_before_the_app_takes_the_screen(drill_home, monkeypatch, capsys):
    from drill.tui.screens import coding_round

    seen: list[tuple[str, str]] = []

    def run(self):  # what the terminal held, and what the app shows, once the app starts
        seen.append((capsys.readouterr().out, self.intro))

    monkeypatch.setattr(coding_round.CodingApp, "run", run)
    assert main(["mock"]) == 0
    printed, shown_in_app = seen[0]
    assert printed.startswith("The standard round: the coding round")
    assert "drill mock talk (talk-only practice)" in printed
    assert "drill mock talk (talk-only practice)" in shown_in_app and "\n" not in shown_in_app


@pytest.mark.parametrize(
    "argv",
    [
        ["mock", "--stretch", "fsdp2,accum"],
        ["mock", "coding", "--stretch", "fsdp2, accum"],
        ["mock", "notebook", "--stretch", "fsdp2,accum"],
    ],
)
def test_stretch_phases_chosen_up_front_on_the_command_line(drill_home, monkeypatch, argv):
    from drill.mock.coding.session import CodingSession, default_rounds_dir
    from drill.mock.coding.stretch import chosen
    from drill.tui.screens import coding_round

    monkeypatch.setattr(coding_round.CodingApp, "run", lambda self: None)
    assert main(argv) == 0
    assert chosen(CodingSession(default_rounds_dir() / "1")) == ["fsdp2", "accum"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mock", "--stretch", "fsdp3"], "--stretch: no stretch phase 'fsdp3' (there are: accum"),
        (["mock", "--stretch", ","], "name at least one stretch phase"),
        (["mock", "talk", "--stretch", "accum"], "unrecognized arguments"),
        (["mock", "notebook", "x.ipynb", "--stretch", "accum"], "--stretch goes with starting"),
    ],
)
def test_a_wrong_stretch_choice_is_one_line_and_exit_2(drill_home, capsys, argv, message):
    assert exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err

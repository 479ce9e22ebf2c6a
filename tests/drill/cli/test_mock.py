from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from drill.cli.main import main
from drill.mock.coding.grader import CHECK_NAMES
from drill.mock.round import MockRun
from tests.support.clocks import FakeClock
from tests.support.mock_rounds import CARDS, open_store, tiny_round


@pytest.fixture
def clock() -> FakeClock:
    """A mock round's monotonic clock, moved by hand."""
    return FakeClock()


def graded_round(home, clock) -> int:
    store = open_store(home / "drill.sqlite3")
    try:
        run = MockRun.start_new(store, tiny_round(), CARDS, rng=random.Random(0), now=clock)
        run.start()
        run.set_answer(run.prompts[0].id, "optimizer state, sampler position and RNG")
        clock.advance(1000)
        run.tick()
        run.grade({})
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
    assert "Fed back to review: push-" in out

    assert main(["mock", "report", str(round_id), "--md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith(f"# Mock round {round_id}: Tiny round\n")
    assert "- [x] RNG state" in md


def test_list_shows_the_bundled_rounds(capsys):
    assert main(["mock", "list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("quick ")
    assert "standard" in out and "55 min" in out


def test_usage_errors_are_one_line_and_exit_2(capsys):
    for argv, message in [
        (["mock", "report"], "usage: drill mock report [coding] ID [--md]"),
        (["mock", "report", "abc"], "round id must be a number"),
        (["mock", "report", "7"], "no mock round with id 7"),
        (["mock", "nosuch"], "unknown round 'nosuch'"),
        (["mock", "list", "--md"], "--md only goes with"),
        (["mock", "resume"], "no interrupted mock round to resume"),
        (["mock", "quick", "--minutes", "0"], "--minutes must be a positive number"),
        (["mock", "quick", "--minutes", "nan"], "--minutes must be a positive number, got nan"),
        (["mock", "quick", "--minutes", "inf"], "--minutes must be a positive number, got inf"),
        (["mock", "quick", "--minutes", "-3"], "--minutes must be a positive number, got -3"),
        (["mock", "grade"], "usage: drill mock grade FILE [--phase P] [--json]"),
        (["mock", "grade", "/no/such/train.py"], "no such file: /no/such/train.py"),
        (["mock", "grade", "x.py", "--phase", "warmup"], "unknown phase 'warmup'; phases:"),
        (["mock", "list", "--json"], "--phase and --json only go with `drill mock grade FILE`"),
        (["mock", "contract", "extra"], "unexpected argument 'extra'"),
        (["mock", "coding", "resume"], "no coding round to resume; start one with"),
        (["mock", "coding", "resume", "9"], "no coding round with id 9"),
        (["mock", "coding", "now"], "usage: drill mock coding [--minutes N]"),
        (["mock", "coding", "--minutes", "nan"], "--minutes must be a positive number, got nan"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert len(err.strip().splitlines()) == 1
        assert "Traceback" not in err


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
    from drill.labs.history import LabHistory
    from drill.labs.overview import LabsOverview

    script = tmp_path / "mine.py"
    script.write_text("def main(:\n")
    assert main(["mock", "grade", str(script), "--phase", "skeleton"]) == 1
    db = open_app_database()
    try:
        [record] = LabHistory(db).runs(lab="mock-coding")
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
    from drill.mock.coding.contract import model_answer_source

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

from __future__ import annotations

import json
import random
import subprocess
import sys

from drill.cli import main
from drill.mock.run import MockRun
from tests.mock.helpers import CARDS, open_store, tiny_round


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


def test_report_history_and_markdown_export(_drill_home, clock, capsys):
    round_id = graded_round(_drill_home, clock)
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
        (["mock", "report"], "usage: drill mock report ID [--md]"),
        (["mock", "report", "abc"], "round id must be a number"),
        (["mock", "report", "7"], "no mock round with id 7"),
        (["mock", "nosuch"], "unknown round 'nosuch'"),
        (["mock", "list", "--md"], "--md only goes with"),
        (["mock", "resume"], "no interrupted mock round to resume"),
        (["mock", "quick", "--minutes", "0"], "--minutes must be a positive number"),
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
    assert heavy_modules_after_import("drill.mock_cli") == []
    # the domain (store included) is UI-free and torch-free
    assert heavy_modules_after_import("drill.mock.run") == ["sqlmodel"]

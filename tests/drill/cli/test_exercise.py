"""`drill exercise`: usage errors are one line and exit 2; list (and --json) shows status; start
prints where the file is; hint and solution follow the stored progress; check exits 0/1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from drill.cli.main import main
from trainer_lab.exercises.catalogue import EXERCISES, get_exercise


@pytest.mark.parametrize("command", ["start", "check", "watch", "hint", "solution"])
def test_an_unknown_name_is_one_line_and_exit_2(command: str, capsys) -> None:
    assert main(["exercise", command, "no-such"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("drill exercise: error: unknown exercise 'no-such'")


def test_without_a_subcommand_prints_help_and_exits_2(capsys) -> None:
    assert main(["exercise"]) == 2
    assert "list,start,check,watch,hint,solution" in capsys.readouterr().out


def test_check_before_start_and_solution_before_check_are_usage_errors(capsys) -> None:
    assert main(["exercise", "check", "ddp-by-hand"]) == 2
    assert "not started: drill exercise start ddp-by-hand" in capsys.readouterr().err
    assert main(["exercise", "solution", "ddp-by-hand"]) == 2
    assert "opens after a check" in capsys.readouterr().err


def test_list_start_and_hint(drill_home: Path, capsys) -> None:
    assert main(["exercise", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(EXERCISES)
    assert {r["status"] for r in rows} == {"not started"}
    assert main(["exercise", "start", "ddp-by-hand"]) == 0
    out = capsys.readouterr().out
    path = drill_home / "exercises" / "ddp-by-hand" / "sync.py"
    assert f"created: {path}" in out and path.is_file()
    assert main(["exercise", "hint", "ddp-by-hand"]) == 0
    assert capsys.readouterr().out.startswith("hint 1/3: ")
    assert main(["exercise", "list"]) == 0
    rows = {line.split()[0]: line.split()[1] for line in capsys.readouterr().out.splitlines()}
    assert rows["ddp-by-hand"] == "started" and rows["first-nan"] == "not"


def test_list_counts_one_check_and_two_checks(drill_home: Path, capsys) -> None:
    main(["exercise", "start", "first-nan"])
    (drill_home / "exercises" / "first-nan" / "nan_hunt.py").write_text("def f(:\n")

    def listed() -> str:
        capsys.readouterr()
        assert main(["exercise", "list"]) == 0
        out = capsys.readouterr().out
        return next(line for line in out.splitlines() if line.startswith("first-nan "))

    assert listed().endswith(get_exercise("first-nan").title)  # no count before a check
    main(["exercise", "check", "first-nan"])
    assert listed().endswith("(1 check)")
    main(["exercise", "check", "first-nan"])
    assert listed().endswith("(2 checks)")


def test_check_on_a_syntax_error_exits_1_naming_file_and_line(drill_home: Path, capsys) -> None:
    main(["exercise", "start", "first-nan"])
    (drill_home / "exercises" / "first-nan" / "nan_hunt.py").write_text("def f(:\n")
    capsys.readouterr()
    assert main(["exercise", "check", "first-nan"]) == 1
    out = capsys.readouterr().out
    assert "FAIL names_the_first: not run: nan_hunt.py:1: SyntaxError" in out
    assert main(["exercise", "solution", "first-nan", "--diff"]) == 0
    assert capsys.readouterr().out.startswith("--- yours/nan_hunt.py")


@pytest.mark.lab
def test_check_and_watch_once_exit_0_on_the_model_answer(drill_home: Path, capsys) -> None:
    main(["exercise", "start", "first-nan"])
    spec = get_exercise("first-nan")
    shutil.copyfile(spec.solution_path, drill_home / "exercises" / "first-nan" / spec.file)
    assert main(["exercise", "check", "first-nan"]) == 0
    assert "solved: 3/3 checks pass" in capsys.readouterr().out
    assert main(["exercise", "watch", "first-nan", "--once"]) == 0

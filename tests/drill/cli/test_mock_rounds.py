"""Coding and notebook rounds next to the talk-only ones in `drill mock history`, `drill mock list`
and `drill stats`; round ids out of range; `grade` options in either order; check details
wrapped without cutting a word."""

from __future__ import annotations

import json
from pathlib import Path

from drill.cli.main import build_parser, main
from tests.support.mock_rounds import coding_rounds


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exited:
        return int(exited.code or 0)


def test_history_lists_coding_and_notebook_rounds(drill_home, capsys):
    coding_rounds()
    assert main(["mock", "history"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "(UTC)", "ROUND", "RESULT"]
    rows = [line.split(None, 4) for line in lines[1:3]]
    # the latest gradings of each check: 2 of 3 hold
    assert sorted((r[0], r[3], r[4]) for r in rows) == [
        ("1", "coding", "2/3 checks hold"),
        ("2", "notebook", "unfinished, phase 1/5, not graded"),
    ]
    assert "drill mock report coding ID" in lines[-1]


def test_history_with_no_round_of_either_kind(drill_home, capsys):
    assert main(["mock", "history"]) == 0
    assert capsys.readouterr().out.startswith("No mock rounds yet.")


def test_list_starts_with_the_coding_round(capsys):
    assert main(["mock", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["coding", "55", "min"]
    assert lines[0].endswith("Standard round — write train.py, graded under torchrun")
    assert "drill mock notebook" in lines[2]
    talk = [line for line in lines if line.startswith(("quick", "standard"))]
    assert talk and all("Talk-only practice round" in line for line in talk)


def test_stats_counts_coding_rounds(drill_home, capsys):
    coding_rounds()
    assert main(["stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["id"], r["kind"], r["finished"], r["checks_held"], r["checks"])
            for r in data["coding_rounds"]] == [
        (2, "notebook", False, None, None), (1, "coding", True, 2, 3)]  # fmt: skip
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "coding round " in out and "#1: 2/3 checks hold" in out
    assert "#2: not graded, unfinished" in out


def test_round_ids_out_of_range_are_one_line_usage_errors(drill_home, capsys):
    huge = "99999999999999999999999"
    for argv in (["mock", "report", huge], ["mock", "report", "coding", huge],
                 ["mock", "resume", huge], ["mock", "report", "0"], ["mock", "report", "-3"],
                 ["mock", "watch", huge]):  # fmt: skip
        assert exit_code(argv) == 2, argv
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert "unexpected" not in err and "Traceback" not in err
        assert "no round with id" in err or "no coding round with id" in err, err


def test_grade_takes_its_options_before_or_after_the_file():
    parser = build_parser()
    for argv in (["mock", "grade", "--phase", "skeleton", "t.py"],
                 ["mock", "grade", "t.py", "--phase", "skeleton"],
                 ["mock", "grade", "--phase=skeleton", "t.py"]):  # fmt: skip
        args = parser.parse_args(argv)
        assert (args.file, args.phase) == ("t.py", ["skeleton"]), argv
    args = parser.parse_args(["mock", "grade", "--json", "--phase", "restart", "r.ipynb"])
    assert (args.file, args.phase, args.json) == ("r.ipynb", ["restart"], True)


def test_check_details_wrap_between_words(capsys):
    from drill.cli.mock_grade import print_checks

    long_path = "/very/long/" + "x" * 120 + "/ckpt/step_000040.pt"
    detail = "restarted at step 0 although " + long_path + " held step 40 (killed after step 9)"
    print_checks([{"name": "restart.resumes", "passed": False, "detail": detail}])
    out = capsys.readouterr().out
    assert long_path in out.split()  # whole, on a line of its own
    assert " ".join(out.replace("FAIL", "").replace("restart.resumes", "").split()) == detail


def test_a_shared_reason_is_printed_once_before_the_checks(capsys):
    from drill.cli.mock_grade import print_verdicts
    from tests.support.coding import hung_grading

    print_verdicts(hung_grading())
    out = capsys.readouterr().out
    assert out.count("no rank made progress") == 1
    assert out.startswith("reason 1: run w2: hang: no rank made progress")
    assert "  affects 3 checks: distributed.exactly_once, distributed.new_order," in out
    assert "FAIL  distributed.new_order     W=2: reason 1\n" in out


def test_the_readme_lists_every_mock_command():
    import argparse

    from drill.cli.main import build_parser
    from tests.support.paths import REPO

    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    mock = next(
        a for a in top.choices["mock"]._actions if isinstance(a, argparse._SubParsersAction)
    )
    readme = (REPO / "README.md").read_text()
    for name in set(mock._name_parser_map) - {"play"}:  # play: what `drill mock ROUND` runs
        assert f"\ndrill mock {name}" in readme, name
    assert "\ndrill mock [--minutes N]           the standard round (the coding round)" in readme


def test_grade_passes_seed_to_the_grader_and_names_it_in_the_report(
    drill_home, tmp_path, monkeypatch, capsys
):
    from drill.cli import mock_grade
    from trainer_lab.grading import Grading

    fixture = Path(__file__).parents[1] / "mock" / "coding" / "fixtures"
    saved = json.loads((fixture / "followups-model-answer.json").read_text())
    asked: list[dict] = []

    def grade(script, out_dir, phases, **options):
        asked.append(options)
        return Grading({**saved, "duration_s": 1.0, "seed": options.get("seed")}, out_dir)

    monkeypatch.setattr(mock_grade, "grade_script", grade)
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    assert main(["mock", "grade", str(script), "--seed", "1234"]) == 0
    assert asked[0]["seed"] == 1234
    out = capsys.readouterr().out
    assert "fault plan: seed 1234 (drill mock grade --seed 1234 reproduces it)" in out

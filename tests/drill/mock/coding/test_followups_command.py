"""`drill mock followups FILE`: the questions as text or JSON, one-line errors, help, and
an import that stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import drill.cli.main as cli_main
from drill.cli import mock as mock_cli
from drill.cli import mock_followups, mock_grade
from tests.support.followups import BROKEN, fixture, variant_source
from trainer_lab.grading import model_answer_source


@pytest.fixture
def drill(monkeypatch):
    """`drill` with `mock followups` registered (as drill/cli/mock.py will register it)."""
    real = mock_cli.register

    def register(subparsers: Any) -> None:
        real(subparsers)
        mock_parser = subparsers._name_parser_map["mock"]
        (sub,) = mock_parser._subparsers._group_actions
        if "followups" not in sub._name_parser_map:
            mock_followups.register(sub)

    monkeypatch.setattr(mock_cli, "register", register)
    return cli_main.main


@pytest.fixture
def fake_grade(monkeypatch):
    """The grader giving a saved grading (as trainer_lab's would), recording what it was asked."""
    calls: list[dict[str, Any]] = []

    def grade(script, out_dir, phases, **options):
        calls.append({"script": script, "phases": list(phases), **options})
        return fixture(BROKEN if Path(script).name == "broken.py" else "model-answer")

    monkeypatch.setattr(mock_grade, "grade_script", grade)
    return calls


def test_followups_json_prints_the_questions(drill, fake_grade, tmp_path, capsys):
    script = tmp_path / "broken.py"
    script.write_text(variant_source(BROKEN))
    assert drill(["mock", "followups", str(script), "--json", "--phase", "restart"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert fake_grade[0]["phases"] == ["restart"] and "on_progress" not in fake_grade[0]
    assert out["status"] == "failed" and out["checks_passed"] == 13
    assert 3 <= len(out["followups"]) <= 5
    first = out["followups"][0]
    assert first["source_check"] == "restart.no_replay_or_skip"
    assert set(first) == {"id", "kind", "question", "rubric", "cards", "source_check", "evidence"}


def test_followups_prints_checks_questions_rubrics_and_cards(drill, fake_grade, tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text(model_answer_source())
    assert drill(["mock", "followups", str(script)]) == 0
    out = capsys.readouterr().out
    assert "PASS  restart.resumes_at_checkpoint" in out
    assert "15/15 checks hold; 5 follow-up questions:" in out
    assert "1. [what-if: torn.previous_checkpoint_used] what-if-70b-checkpoint" in out
    assert out.count("A good answer states:") == 5
    assert "Cards: llm-sharded-checkpoints-dcp" in out
    assert max(len(line) for line in out.splitlines()) <= 100


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mock", "followups"], "usage: drill mock followups FILE [--phase P] [--json]"),
        (["mock", "followups", "/no/such/train.py"], "no such file: /no/such/train.py"),
        (["mock", "followups", "x.py", "--phase", "warmup"], "unknown phase 'warmup'; phases:"),
    ],
)
def test_followups_errors_are_one_line(drill, capsys, argv, message):
    assert drill(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("drill: error")]) == 1


def test_followups_help_explains(drill, capsys):
    with pytest.raises(SystemExit) as exit_:
        drill(["mock", "followups", "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("usage: drill mock followups ")
    assert "rubric a good answer states" in out and "never run" in out
    assert "--json" in out and "--phase" in out


def test_the_command_and_the_domain_import_nothing_heavy():
    code = (
        "import sys, json, drill.mock.coding.followups, drill.cli.mock_followups; "
        "heavy = ('torch', "
        "'numpy', 'sqlmodel', 'textual', 'rich', 'yaml', 'pydantic'); "
        "print(json.dumps([m for m in heavy if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []

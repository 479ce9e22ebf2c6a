"""`exercise:` on a card names an exercise in the catalogue; an unknown one is one line with
path:line, like an unknown lab."""

from pathlib import Path

import pytest

from drill.cli.main import main
from tests.support.decks import write_deck

HEADER = "deck: ex\ntitle: Exercise links\ncards:\n"


def _check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], exercise: str
) -> tuple[int, list[str]]:
    body = f"  - id: c1\n    level: easy\n    front: q\n    back: a\n    exercise: {exercise}\n"
    path = write_deck(tmp_path / "decks", HEADER + body)
    code = main(["decks", "check", str(path)])
    return code, [line for line in capsys.readouterr().out.splitlines() if line]


def test_a_known_exercise_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _check(tmp_path, capsys, "ddp-by-hand")
    assert code == 0, lines


def test_an_unknown_exercise_is_one_line_with_path_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _check(tmp_path, capsys, "no-such-kata")
    assert code == 1
    assert len(lines) == 1
    path = tmp_path / "decks" / "links.yaml"
    assert lines[0].startswith(f"{path}:8: card c1: unknown exercise 'no-such-kata' (valid: ")
    assert "ddp-by-hand" in lines[0]

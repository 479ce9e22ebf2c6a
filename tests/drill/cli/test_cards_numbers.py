"""`drill cards` on a numbers card: its values of one fixed drawing, and what each review draws."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.decks.loader import load_decks
from tests.support.numbers_decks import fixed_front, write_numbers_deck

RANGES = "size: 10 to 100 in steps of 10 [bold]MB[/bold]\ufffd; n: 2 / 4 / 1,024 GPUs"


@pytest.fixture
def decks(tmp_path: Path) -> Path:
    return write_numbers_deck(tmp_path / "decks")


def the_front(decks: Path) -> str:
    card = load_decks([decks], include_bundled=False).card("ring-bytes")
    return fixed_front(card)


def test_text_shows_the_fixed_drawing_and_the_ranges(
    decks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cards", "deck:nums", "--decks", str(decks)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    numbers = next(i for i, line in enumerate(lines) if line.startswith("ring-bytes"))
    front = the_front(decks)
    assert "{" not in front and lines[numbers].endswith(front[:60])
    note = lines[numbers + 1]
    assert note.startswith("    Numbers card: shown with one fixed drawing (seed 0)")
    assert "each review draws new values" in note and RANGES in note
    assert "\x07" not in out  # the unit's bell is shown as U+FFFD, never sent
    plain = next(i for i, line in enumerate(lines) if line.startswith("plain-card"))
    assert "{braced}" in lines[plain] and not lines[plain + 1].startswith("    ")


def test_json_has_the_filled_front_and_the_note(
    decks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cards", "deck:nums", "--json", "--decks", str(decks)]) == 0
    found = {c["card"]: c for c in json.loads(capsys.readouterr().out)}
    assert found["ring-bytes"]["front"] == the_front(decks)
    assert "(seed 0)" in found["ring-bytes"]["numbers_note"]
    assert found["plain-card"]["front"] == "What is {braced} text on a plain card?"
    assert found["plain-card"]["numbers_note"] is None

"""Text from outside is text on the console too: `drill decks list`, `drill decks check` and
`drill cards` print a deck of markup, terminal escapes and HTML with no control character
(each becomes U+FFFD) and every bracket as typed; JSON keeps the text exact, escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.cli.output import say, text
from drill.text import PLACEHOLDER
from tests.support.hostile_decks import (
    HOSTILE_TEXT_DECK,
    HOSTILE_VALUE,
    SHOWN,
    control_chars,
    write_hostile_text_deck,
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_hostile_text_deck(tmp_path / "decks")
    return tmp_path / "decks"


def output(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    both = captured.out + captured.err
    assert control_chars(both) == [], both
    return both


def test_decks_list_prints_the_title_as_text(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--decks", str(folder), "decks", "list"]) == 0
    out = output(capsys)
    line = next(line for line in out.splitlines() if line.startswith("hostile "))
    assert SHOWN in line and f"{PLACEHOLDER}]2;pwned{PLACEHOLDER}" in line
    assert "<img src=x onerror=alert(1)>" in line  # a terminal shows HTML as it is


def test_decks_check_passes_the_deck_and_its_problems_are_text(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--decks", str(folder), "decks", "check", str(folder / "hostile.yaml")]) == 0
    assert output(capsys).startswith("ok: 1 deck(s), 2 card(s)")
    broken = HOSTILE_TEXT_DECK.replace("run: ddp-baseline", 'run: "C++ [advanced] \\e]2;lab\\a"')
    path = folder.parent / "broken.yaml"  # beside the deck folder: its card ids are taken
    path.write_text(broken)
    assert main(["decks", "check", str(path)]) == 1
    assert "card hostile-lab: unknown lab 'C++ [advanced] " in output(capsys)


def test_cards_prints_fronts_as_text_and_json_keeps_them_exact(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cards", "deck:hostile", "--decks", str(folder)]) == 0
    out = output(capsys)
    assert out.count("C++ [advanced] [/x] [bold]b[/bold]") == 2
    assert main(["cards", "deck:hostile", "--json", "--decks", str(folder)]) == 0
    found = json.loads(output(capsys))
    assert [card["front"] for card in found] == [HOSTILE_VALUE, HOSTILE_VALUE]


def test_the_output_helpers(capsys: pytest.CaptureFixture[str]) -> None:
    say(HOSTILE_VALUE, "\x9b")
    assert output(capsys).startswith("C++ [advanced]")
    shown = text(HOSTILE_VALUE, "red")
    assert shown.plain.startswith("C++ [advanced] [/x]") and control_chars(shown.plain) == []

"""`drill decks check` finds the problems of the decks the other commands load, and every hint
beside a skipped deck names a command that reports its problem (a deck loaded with --decks is
not one plain `drill decks check` knows)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.tui.startup import invalid_deck_notice

BROKEN = "deck: broken\ncards:\n  - id: x\n"  # no title, and the card has no front or back


@pytest.fixture
def mydecks(tmp_path: Path) -> Path:
    folder = tmp_path / "my decks"  # a space: the hinted command must quote it
    folder.mkdir()
    (folder / "broken.yaml").write_text(BROKEN)
    return folder


def hinted_command(line: str) -> list[str]:
    """The argv after `drill` in a hint "... (see: drill decks check PATH)"."""
    command = line.split("(see: ", 1)[1].rsplit(")", 1)[0]
    argv = shlex.split(command)
    assert argv[:3] == ["drill", "decks", "check"], line
    return argv[1:]


def test_decks_check_checks_the_deck_dirs_given_and_in_drill_decks(
    mydecks: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["--decks", str(mydecks), "decks", "check"],
                 ["decks", "check", "--decks", str(mydecks)]):  # fmt: skip
        assert main(argv) == 1, argv
        assert f"{mydecks / 'broken.yaml'}:" in capsys.readouterr().out
    monkeypatch.setenv("DRILL_DECKS", str(mydecks))
    assert main(["decks", "check"]) == 1
    assert f"{mydecks / 'broken.yaml'}:" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["decks", "list"], ["due"]])
def test_the_hint_beside_a_skipped_deck_names_a_command_that_finds_its_problem(
    command: list[str], mydecks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--decks", str(mydecks), *command]) == 0
    captured = capsys.readouterr()
    hints = [line for line in (captured.out + captured.err).splitlines() if "(see: " in line]
    assert len(hints) == 1
    argv = hinted_command(hints[0])
    assert main(argv) == 1  # run as hinted, without the --decks the first command had
    assert f"{mydecks / 'broken.yaml'}:" in capsys.readouterr().out


def test_the_app_notice_names_the_files_to_check(mydecks: Path) -> None:
    notice = invalid_deck_notice([mydecks / "broken.yaml"])
    assert notice is not None
    command = notice.split("Run `", 1)[1].split("`", 1)[0]
    assert shlex.split(command) == ["drill", "decks", "check", str(mydecks / "broken.yaml")]

"""`--decks` is one option, accepted alike before and after each command that loads decks."""

from __future__ import annotations

import pytest

from drill.cli.main import build_parser

COMMANDS = [
    ["stats"],
    ["cards", "q"],
    ["plan"],
    ["readiness"],
    ["export", "csv", "-"],
    ["decks", "list"],
    ["decks", "check"],
    ["due"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_decks_after_the_command_adds_to_the_list(command: list[str]) -> None:
    parsed = build_parser().parse_args([*command, "--decks", "A", "--decks", "B"])
    assert parsed.decks == ["A", "B"]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_decks_before_the_command_is_kept(command: list[str]) -> None:
    parsed = build_parser().parse_args(["--decks", "A", *command])
    assert parsed.decks == ["A"]
    assert build_parser().parse_args(command).decks == []


def test_every_decks_option_has_the_same_help() -> None:
    helps = set()
    parser = build_parser()
    for command in COMMANDS:
        sub = parser
        for word in command:
            actions = [a for a in sub._actions if a.choices and word in (a.choices or {})]
            if not actions:
                break
            sub = actions[0].choices[word]
        helps |= {a.help for a in sub._actions if "--decks" in a.option_strings}
    assert len(helps) == 1

"""The README's test command is the one CI runs, and the deck format it documents is complete."""

from __future__ import annotations

import re

from drill.decks.models import Card, Deck, LabLink, Numbers, NumberVar, Predict, PredictChoice
from tests.support.paths import REPO
from trainer_lab.catalogue import CATALOGUE


def test_readme_test_command_is_exactly_ci() -> None:
    ci_command = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci_command.startswith("pip install torch==2.13.0")
    assert f"\n{ci_command}\n" in (REPO / "README.md").read_text()


def test_readme_documents_every_deck_field() -> None:
    text = (REPO / "README.md").read_text()
    for model in (Deck, Card, LabLink, Predict, PredictChoice, Numbers, NumberVar):
        for name in model.model_fields:
            assert f"{name}:" in text, f"{model.__name__}.{name} is not documented"


def test_readme_lab_table_matches_the_catalogue_groups() -> None:
    text = (REPO / "README.md").read_text()
    section = text[text.index("\n## Labs\n") :]
    section = section[: section.index("\n## ", 1)]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith(("| group", "| ---")):
            continue
        group, labs = line.strip("| ").split("|", 1)
        table[group.strip()] = set(re.findall(r"`([a-z0-9-]+)`", labs))
    expected: dict[str, set[str]] = {}
    for spec in CATALOGUE.values():
        expected.setdefault(spec.group, set()).add(spec.name)
    assert table == expected


def test_every_command_the_readme_shows_is_registered() -> None:
    import argparse

    from drill.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    shown = set(re.findall(r"^drill ([a-z]+)\b", (REPO / "README.md").read_text(), re.M))
    assert {"stats", "cards", "due", "verify", "exercise"} <= shown
    assert shown - set(sub.choices) == set()

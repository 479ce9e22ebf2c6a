"""`drill cards` with negated terms: a term that starts with `-` goes after `--` (argparse reads
`-tag:x` before it as an option); inside one quoted query it needs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drill.cli.main import main

DECK = """\
deck: zz-negation-test
title: Negation test deck
cards:
  - id: zz-neg-fsdp
    level: hard
    tags: [fsdp]
    front: How does FSDP shard the optimizer state?
    back: Per rank.
  - id: zz-neg-ddp
    level: medium
    tags: [ddp]
    front: When does DDP all-reduce?
    back: During backward, per bucket.
"""


@pytest.fixture
def decks(tmp_path: Path) -> str:
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "neg.yaml").write_text(DECK)
    return str(tmp_path / "decks")


def found(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [c["card"] for c in json.loads(capsys.readouterr().out)]


def test_negated_terms_after_double_dash(decks: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cards", "--json", "--decks", decks, "--", "deck:zz-negation", "-tag:fsdp"]
    assert main(argv) == 0
    assert found(capsys) == ["zz-neg-ddp"]
    assert main([*argv, "-is:new"]) == 0
    assert found(capsys) == []  # nothing reviewed yet: every card is new


def test_negated_term_inside_a_quoted_query(decks: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cards", "deck:zz-negation -optimizer", "--json", "--decks", decks]) == 0
    assert found(capsys) == ["zz-neg-ddp"]

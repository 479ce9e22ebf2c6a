"""Card text renders as its author meant: the review screen renders front, back and `more` as
Markdown (Textual's parser, markdown-it "gfm-like"), where a wrapped line that happens to begin
with `+ `, `* `, `# ` or sits under `---` silently becomes a nested bullet, a heading or a rule.
The bundled decks write bullets with `-` and use no headings or rules, so any of those is an
accident of line wrapping."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from decks import bundled_deck_paths

PARSER = MarkdownIt("gfm-like")
FIELDS = ("front", "back", "more")


def accidental_markup(text: str) -> list[str]:
    """Structures in `text` the decks never write on purpose, each with its (0-based) line."""
    found = []
    for token in PARSER.parse(text):
        line = token.map[0] if token.map else "?"
        if token.type == "bullet_list_open" and token.markup != "-":
            found.append(f"line {line}: a '{token.markup}' line became a bullet")
        elif token.type == "heading_open":
            found.append(f"line {line}: became a heading ({token.markup})")
        elif token.type == "hr":
            found.append(f"line {line}: became a horizontal rule")
        elif token.type == "ordered_list_open" and token.attrGet("start") not in (None, 1):
            found.append(f"line {line}: a number at a line start became a list")
    return found


def test_accidental_markup_is_caught_and_intended_markup_is_not() -> None:
    wrapped = "- weights 2 + grads 2\n  + master 4 = **16 B**."
    assert accidental_markup(wrapped) == ["line 1: a '+' line became a bullet"]
    assert accidental_markup("the sum is\n# not a heading")
    assert accidental_markup("a total\n---")
    assert accidental_markup("it ran until\n\n1999. then it stopped")
    intended = "- one\n- two\n\n1. first\n2. second\n\n**bold**, *stress*, `a + b`\n\n```\n+ x\n```"
    assert accidental_markup(intended) == []


def _cards(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list((yaml.safe_load(handle) or {}).get("cards") or [])


@pytest.mark.parametrize("path", bundled_deck_paths(), ids=lambda path: path.name)
def test_card_text_renders_as_written(path: Path) -> None:
    found = [
        f"{card['id']} {field}: {problem}"
        for card in _cards(path)
        for field in FIELDS
        if card.get(field)
        for problem in accidental_markup(card[field])
    ]
    assert found == []

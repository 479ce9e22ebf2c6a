"""Measures of a card's text that the deck-content tests share."""

from __future__ import annotations

import re

_WORDLIKE = re.compile(r"[A-Za-z0-9]")


def word_count(text: str) -> int:
    """Whitespace-separated tokens holding a letter or digit: table pipes, rules (`|---|`),
    bullets and arrows do not count; words inside code do."""
    return sum(1 for token in text.split() if _WORDLIKE.search(token))

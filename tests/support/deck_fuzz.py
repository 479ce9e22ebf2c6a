"""Hypothesis strategies for deck and settings files (used by tests/drill/decks/test_fuzz.py
and benchmarks/deck_fuzz.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import decks

YAML_PUNCTUATION = "[]{}&*!|>-:?,#'\"%@`~.\n\t \\"
YAML_WORDS = [
    "deck:",
    "cards:",
    "- id: a",
    "level: easy",
    "front:",
    "back:",
    "tags:",
    "lab:",
    "run: resume",
    "params:",
    "expect:",
    "predict:",
    "&a",
    "*a",
    "<<: *a",
    "!!timestamp",
    "!!binary",
    "!!set",
    "!!omap",
    "!!python/object:os.system",
    "yes",
    ".nan",
    ".inf",
    "1:0:0",
    "0x1F",
    "2024-01-01",
    "~",
    "---",
    "...",
    "%YAML 1.1",
    '"\\ud800"',
    "\ufeff",
    "\x00",
]


def yaml_alphabet_text() -> st.SearchStrategy[str]:
    """Text made of YAML punctuation, keywords and a few letters."""
    piece = st.one_of(
        st.sampled_from(YAML_WORDS),
        st.text(alphabet=YAML_PUNCTUATION + "ab01", min_size=1, max_size=8),
    )
    return st.lists(piece, max_size=80).map("".join)


def _scalar() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
        st.sampled_from(["easy", "medium", "hard", "resume", "loss_jump_ratio >= 2", "yes"]),
    )


_KEYS = ["deck", "title", "description", "cards", "id", "level", "tags", "front", "back"]
_KEYS += ["rubric", "lab", "run", "params", "world_size", "expect", "predict", "ask", "choices"]
_KEYS += ["text", "when", "more", "replaces", "where"]


def deck_like() -> st.SearchStrategy[Any]:
    """Nested data with the deck format's keys, dumped by the test with yaml.safe_dump."""
    keys = st.one_of(st.sampled_from(_KEYS), st.text(max_size=6))
    return st.recursive(
        _scalar(),
        lambda children: st.one_of(
            st.lists(children, max_size=5),
            st.dictionaries(keys, children, max_size=6),
        ),
        max_leaves=40,
    )


def bundled_texts() -> list[str]:
    return [path.read_text(encoding="utf-8") for path in decks.bundled_deck_paths()]


@st.composite
def mutate(draw: st.DrawFn, text: str) -> str:
    """A few random edits of a real deck: cut, duplicate, insert YAML, or flip a character."""
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        start = draw(st.integers(0, len(text) - 1))
        end = min(len(text), start + draw(st.integers(0, 200)))
        kind = draw(st.sampled_from(["cut", "dup", "insert", "flip"]))
        if kind == "cut":
            text = text[:start] + text[end:]
        elif kind == "dup":
            text = text[:end] + text[start:end] + text[end:]
        elif kind == "insert":
            text = text[:start] + draw(yaml_alphabet_text()) + text[start:]
        else:
            text = text[:start] + draw(st.characters()) + text[start + 1 :]
    return text


def settings_text() -> st.SearchStrategy[str]:
    """TOML-ish settings files: known and unknown keys with odd values."""
    key = st.sampled_from(
        ["desired_retention", "new_cards_per_day", "learn_ahead_minutes", "day_start_hour", "x"]
    )
    value = st.one_of(
        st.sampled_from(["nan", "inf", "-inf", "0.9", "1e999", "20", "-1", "true", '"a"', "[]"]),
        st.sampled_from(["[" * 600 + "]" * 600, "9" * 5000, "{a = 1}", "0x10", "1979-05-27"]),
        st.integers().map(str),
        st.floats().map(repr),
    )
    line = st.builds(lambda k, v: f"{k} = {v}", key, value)
    return st.lists(st.one_of(line, yaml_alphabet_text()), max_size=6).map("\n".join)

"""A bad card leaves only itself out: its file's other cards load, and the card is named as a
problem (file:line). A file whose top level is wrong is still left out whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.decks.index import load_index
from drill.decks.loader import load_decks, parse_file

HEAD = "deck: d\ntitle: D\ncards:\n"


def good(card_id: str) -> str:
    return f"  - id: {card_id}\n    level: easy\n    front: Q {card_id}\n    back: A\n"


# Bad cards of several kinds, each with one problem: (text, line of the problem within the
# card (0-based), the start of the problem's message).
BAD = {
    "missing": ("  - id: {id}\n    level: easy\n    front: Q\n    tags: []\n", 0, "missing field"),
    "level": ("  - id: {id}\n    level: extreme\n    front: Q\n    back: A\n", 1, "level:"),
    "yes": ("  - id: {id}\n    level: easy\n    front: Q\n    back: yes\n", 3, "back:"),
    "unknown": (
        "  - id: {id}\n    level: easy\n    colour: red\n    front: Q\n    back: A\n",
        2,
        "unknown",
    ),
    "dupkey": (
        "  - id: {id}\n    level: easy\n    front: Q\n    front: A\n    back: A\n",
        3,
        "duplicate key",
    ),
    "badid": ("  - id: Bad Id\n    level: easy\n    front: Q\n    back: A\n", 0, "id:"),
}


def _load(folder: Path) -> tuple[dict[str, list[str]], list[str]]:
    decks = load_decks([folder], include_bundled=False, use_cache=False)
    cards = {d.deck.deck: [c.id for c in d.deck.cards] for d in decks.decks}
    return cards, [str(p) for p in decks.problems]


@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_a_bad_card_leaves_out_only_itself(tmp_path: Path, position: str) -> None:
    bad = "  - id: broken\n    level: easy\n    front: Q\n"  # no back
    cards = [good("a"), good("b")]
    at = {"first": 0, "middle": 1, "last": 2}[position]
    cards.insert(at, bad)
    path = tmp_path / "deck.yaml"
    path.write_text(HEAD + "".join(cards))
    loaded, problems = _load(tmp_path)
    assert loaded == {"d": ["a", "b"]}
    assert problems == [f"{path}:{4 + 4 * at}: card broken: missing field 'back'"]


def test_a_repeated_id_keeps_the_first_card(tmp_path: Path) -> None:
    path = tmp_path / "deck.yaml"
    path.write_text(HEAD + good("a") + good("b") + good("a").replace("Q a", "other"))
    loaded, problems = _load(tmp_path)
    assert loaded == {"d": ["a", "b"]}
    assert problems == [f"{path}:12: card a: duplicate card id 'a' (first at line 4)"]
    deck = load_decks([tmp_path], include_bundled=False, use_cache=False).deck("d")
    assert deck is not None and deck.deck.cards[0].front == "Q a"


def test_a_card_id_another_deck_has_leaves_out_that_card_only(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(HEAD + good("shared"))
    second = tmp_path / "b.yaml"
    second.write_text("deck: e\ntitle: E\ncards:\n" + good("own") + good("shared"))
    loaded, problems = _load(tmp_path)
    assert loaded == {"d": ["shared"], "e": ["own"]}
    assert problems == [
        f"{second}:8: card shared: duplicate card id 'shared' (also in {tmp_path / 'a.yaml'}:4)"
    ]


def test_a_card_that_is_not_a_mapping_is_named_by_position(tmp_path: Path) -> None:
    path = tmp_path / "deck.yaml"
    path.write_text(HEAD + good("a") + "  - just text\n" + good("b"))
    loaded, problems = _load(tmp_path)
    assert loaded == {"d": ["a", "b"]}
    assert len(problems) == 1 and problems[0].startswith(f"{path}:8: card #2: ")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("deck: d\ncards:\n" + good("a"), 1),  # no title
        ("deck: d\ntitle: D\ncards: some text\n", 3),  # cards not a list
        ("deck: Bad Id\ntitle: D\ncards:\n" + good("a"), 1),  # a bad deck id
        (HEAD + good("a") + "author: me\n", 8),  # an unknown top-level key
    ],
)
def test_a_bad_top_level_still_leaves_the_file_out(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "deck.yaml"
    path.write_text(text)
    decks = load_decks([tmp_path], include_bundled=False, use_cache=False)
    assert decks.decks == [] and decks.invalid_paths == [path]
    assert [p.line for p in decks.problems] == [line]


def test_a_duplicate_deck_id_leaves_the_second_file_out(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(HEAD + good("x"))
    (tmp_path / "b.yaml").write_text(HEAD + good("y"))
    decks = load_decks([tmp_path], include_bundled=False, use_cache=False)
    assert [c.id for d in decks.decks for c in d.deck.cards] == ["x"]
    assert decks.invalid_paths == [tmp_path / "b.yaml"]


def test_the_cache_and_the_first_paint_keep_the_good_cards_and_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "deck.yaml"
    path.write_text(HEAD + good("a") + "  - id: broken\n    level: easy\n")
    fresh = load_decks([tmp_path], include_bundled=False)  # validates and fills the cache
    index = load_index([tmp_path], include_bundled=False)
    assert index is not None
    assert [o.card_ids for o in index.outline()] == [("a",)]
    assert index.invalid_paths == []
    assert [str(p) for p in index.skipped_cards()] == [str(p) for p in fresh.problems]
    assert [str(p) for p in index.skipped_cards()] == [
        f"{path}:8: card broken: missing field 'front'",
        f"{path}:8: card broken: missing field 'back'",
    ]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["good", *BAD]), st.sampled_from(["a", "b", "c", "d", "e"])),
        min_size=1,
        max_size=12,
    )
)
def test_any_mix_of_cards_loads_exactly_the_good_first_ones(
    tmp_path: Path, plan: list[tuple[str, str]]
) -> None:
    path = tmp_path / "deck.yaml"
    texts = [good(i) if kind == "good" else BAD[kind][0].format(id=i) for kind, i in plan]
    path.write_text(HEAD + "".join(texts))
    entry = parse_file(path)
    assert entry.deck is not None
    expected: list[str] = []
    expected_lines: set[int] = set()
    seen: set[str] = set()
    card_line = 4
    for (kind, card_id), text in zip(plan, texts, strict=True):
        card_line, start = card_line + text.count("\n"), card_line
        named = kind != "badid"
        if named and card_id in seen:
            expected_lines.add(start)  # a repeated id, whatever the card holds
        elif kind == "good":
            expected.append(card_id)
        if kind != "good":
            _, offset, message = BAD[kind]
            expected_lines.add(start + offset)
            assert any(p.line == start + offset and message in p.message for p in entry.problems)
        if named:
            seen.add(card_id)
    assert [c["id"] for c in entry.deck["cards"]] == expected
    assert {p.line for p in entry.problems} == expected_lines
    assert all(p.path == path for p in entry.problems)

"""Each deck error kind is reported as `path:line: card <id>: message` with the exact line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from drill.decks.index import load_index
from drill.decks.loader import LoadedDeck, Problem, check_paths, load_decks
from drill.decks.problems import child, duplicate_keys

HEAD = "deck: d\ntitle: D\ncards:\n"
GOOD_CARD = "  - id: ok\n    level: easy\n    front: Q\n    back: A\n"

WriteDeck = Callable[[str, str], Path]


def problems_of(path: Path) -> list[str]:
    return [str(p) for p in check_paths([path])]


def test_yaml_syntax_error_names_the_line(write_deck: WriteDeck) -> None:
    path = write_deck("syntax.yaml", "deck: d\ntitle: [oops\ncards: []\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: YAML syntax error:")


def test_missing_field(write_deck: WriteDeck) -> None:
    path = write_deck("m.yaml", HEAD + GOOD_CARD + "  - id: nolevel\n    front: Q\n    back: A\n")
    assert problems_of(path) == [f"{path}:8: card nolevel: missing field 'level'"]


def test_mistyped_field(write_deck: WriteDeck) -> None:
    card = "  - id: lvl\n    level: extreme\n    front: Q\n    back: A\n"
    path = write_deck("t.yaml", HEAD + card)
    assert problems_of(path) == [
        f"{path}:5: card lvl: level: Input should be 'easy', 'medium' or 'hard'"
    ]


def test_mistyped_nested_list_item(write_deck: WriteDeck) -> None:
    card = "  - id: tg\n    level: easy\n    tags: [a, 3]\n    front: Q\n    back: A\n"
    path = write_deck("tags.yaml", HEAD + card)
    assert problems_of(path) == [
        f"{path}:6: card tg: tags.1: Input should be a valid string "
        "(YAML read `3` as a number: quote it)"
    ]


def test_unknown_key(write_deck: WriteDeck) -> None:
    path = write_deck("u.yaml", HEAD + GOOD_CARD + "    colour: red\n")
    assert problems_of(path) == [f"{path}:8: card ok: unknown key 'colour'"]


def test_unknown_top_level_key_has_no_card(write_deck: WriteDeck) -> None:
    path = write_deck("top.yaml", "deck: d\ntitle: D\nauthor: me\ncards: []\n")
    assert problems_of(path) == [f"{path}:3: unknown key 'author'"]


def test_duplicate_id_within_deck(write_deck: WriteDeck) -> None:
    path = write_deck("dup.yaml", HEAD + GOOD_CARD + GOOD_CARD)
    assert problems_of(path) == [f"{path}:8: card ok: duplicate card id 'ok' (first at line 4)"]


def test_duplicate_id_across_decks(tmp_path: Path) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    (folder / "a.yaml").write_text(HEAD + GOOD_CARD)
    (folder / "b.yaml").write_text("deck: e\ntitle: E\ncards:\n" + GOOD_CARD)
    assert problems_of(folder) == [
        f"{folder / 'b.yaml'}:4: card ok: duplicate card id 'ok' (also in {folder / 'a.yaml'}:4)"
    ]


def test_empty_front_and_back(write_deck: WriteDeck) -> None:
    card = "  - id: blank\n    level: easy\n    front:\n    back: '   '\n"
    path = write_deck("e.yaml", HEAD + card)
    assert problems_of(path) == [
        f"{path}:6: card blank: front: must not be empty",
        f"{path}:7: card blank: back: must not be empty",
    ]


def test_card_without_id_is_named_by_position(write_deck: WriteDeck) -> None:
    card = "  - level: easy\n    front: Q\n    back: A\n"
    path = write_deck("noid.yaml", HEAD + GOOD_CARD + card)
    assert problems_of(path) == [f"{path}:8: card #2: missing field 'id'"]


def test_duplicate_yaml_key(write_deck: WriteDeck) -> None:
    path = write_deck("k.yaml", HEAD + GOOD_CARD + "    front: again\n")
    assert problems_of(path) == [f"{path}:8: card ok: duplicate key 'front'"]


def test_duplicate_top_level_key_rejects_the_file(write_deck: WriteDeck) -> None:
    path = write_deck("top-dup.yaml", HEAD + GOOD_CARD + "title: again\n")
    assert problems_of(path) == [f"{path}:8: duplicate key 'title'"]
    decks = load_decks([path.parent], include_bundled=False, use_cache=False)
    assert decks.decks == [] and decks.invalid_paths == [path]


def test_clean_deck_has_no_problems(deck_dir: Path) -> None:
    assert check_paths([deck_dir]) == []


def test_bundled_decks_are_valid() -> None:
    decks = load_decks(use_cache=False)
    assert [str(p) for p in decks.problems] == []
    assert sum(len(d.deck.cards) for d in decks.decks) >= 30


def test_app_skips_invalid_deck_and_names_it(deck_dir: Path) -> None:
    bad = deck_dir / "zz-bad.yaml"  # no title: the deck itself is bad, not just a card
    bad.write_text("deck: d\ncards:\n" + GOOD_CARD.replace("id: ok", "id: x"))
    decks = load_decks([deck_dir], include_bundled=False)
    assert [d.deck.deck for d in decks.decks] == ["basics"]
    assert decks.invalid_paths == [bad]
    assert decks.card("alpha") is not None and decks.deck_of("alpha") == "basics"
    assert decks.card("x") is None


def test_cache_serves_unchanged_files_and_notices_edits(deck_dir: Path) -> None:
    assert load_index([deck_dir], include_bundled=False) is None  # nothing validated yet
    load_decks([deck_dir], include_bundled=False)
    index = load_index([deck_dir], include_bundled=False)
    assert index is not None
    assert [o.card_ids for o in index.outline()] == [("alpha", "beta", "gamma")]
    record = index.card_record("beta")
    assert record is not None and record.front == "What is beta?"
    full = load_decks([deck_dir], include_bundled=False)
    assert record.content_hash() == full.card("beta").content_hash()  # type: ignore[union-attr]

    path = deck_dir / "basics.yaml"
    path.write_text(path.read_text().replace("The second.", "The second letter."))
    assert load_index([deck_dir], include_bundled=False) is None
    assert load_decks([deck_dir], include_bundled=False).card("beta").back == "The second letter."  # type: ignore[union-attr]


def test_link_checks_report_without_skipping(deck_dir: Path) -> None:
    def checker(loaded: LoadedDeck) -> list[Problem]:
        line = loaded.line_of("beta", "front")
        return [Problem(loaded.path, line, "beta", "unknown lab 'nope'")]

    decks = load_decks([deck_dir], include_bundled=False, link_checks=(checker,))
    assert [str(p) for p in decks.problems] == [
        f"{deck_dir / 'basics.yaml'}:10: card beta: unknown lab 'nope'"
    ]
    assert decks.card("beta") is not None


LAB_CARD = """\
  - id: linked
    level: hard
    front: Q
    back: A
    lab:
      run: resume
      params: {resume_from: weights_only, steps: 3, lr: 0.5, strict: true}
      world_size: 2
      expect: ["loss_jump_ratio >= 2"]
    predict:
      ask: The first loss after resume is ...
      choices:
        - {text: about the same, when: "loss_jump_ratio < 1.2"}
        - {text: clearly higher, when: "loss_jump_ratio >= 2"}
"""


def test_decks_rebuilt_from_cache_equal_freshly_validated_ones(deck_dir: Path) -> None:
    (deck_dir / "linked.yaml").write_text("deck: linked\ntitle: L\ncards:\n" + LAB_CARD)
    load_decks([deck_dir])  # fills the cache
    cached, fresh = load_decks([deck_dir]), load_decks([deck_dir], use_cache=False)
    assert [d.deck for d in cached.decks] == [d.deck for d in fresh.decks]
    card = cached.card("linked")
    assert card is not None and card.lab is not None and card.predict is not None
    assert type(card.lab).__name__ == "LabLink" and card.lab.params["steps"] == 3
    assert type(card.predict.choices[1]).__name__ == "PredictChoice"
    assert card.content_hash() == fresh.card("linked").content_hash()  # type: ignore[union-attr]


def test_a_quote_left_open_is_reported_where_it_starts(write_deck: WriteDeck) -> None:
    cards = "".join(GOOD_CARD.replace("id: ok", f"id: c{n}") for n in range(3))  # lines 4-15
    late = '  - id: late\n    level: easy\n    back: "never closed\n    front: "Q"\n'
    path = write_deck("quote.yaml", HEAD + cards + late)  # the quote opens on line 18
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:18: YAML syntax error: the quoted text that starts here")
    assert "runs on to line 19" in problem


def test_a_quote_never_closed_is_reported_where_it_starts(write_deck: WriteDeck) -> None:
    path = write_deck("eof.yaml", HEAD + GOOD_CARD + '    more: "open\n' + "\n" * 5)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:8: YAML syntax error: found unexpected end of stream")


def test_a_repeated_deck_key_is_named_once_beside_a_repeated_card_key(
    write_deck: WriteDeck,
) -> None:
    """The deck-level walk leaves the cards' nodes to their own walk (issue 40: one walk of
    the tree, not two): the deck's repeated key rejects the file, and the card's is not named
    again as the deck's (the cards of a rejected file are not looked at)."""
    path = write_deck("both-dup.yaml", HEAD + GOOD_CARD + "    front: again\ntitle: again\n")
    assert problems_of(path) == [f"{path}:9: duplicate key 'title'"]


def test_duplicate_keys_does_not_walk_into_skipped_nodes() -> None:
    root = yaml.compose("a: {x: 1, x: 2}\nb: {y: 1, y: 2}\n", Loader=yaml.SafeLoader)
    _, first = child(root, "a")
    assert duplicate_keys(root) == [(1, "x"), (2, "y")]
    assert duplicate_keys(root, skip=[first]) == [(2, "y")]

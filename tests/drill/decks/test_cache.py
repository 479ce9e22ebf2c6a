"""The deck cache holds data, never code: JSON, shape-checked on read, keyed by the deck schema
version; anything off is ignored and rebuilt, never fatal."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from drill.decks import cache
from drill.decks.index import load_index
from drill.decks.loader import load_decks
from drill.decks.models import Card, Deck, LabLink, Numbers, NumberVar, Predict
from drill.paths import cache_dir
from drill.review.due import first_paint

# The deck models' JSON schema for each DECK_SCHEMA_VERSION. Changed drill/decks/models.py?
# Bump DECK_SCHEMA_VERSION in drill/decks/cache.py and record the new hash here.
SCHEMA_HASHES = {
    2: "406c8cc6e63ff63f",
    3: "7c824eaaa07dbcac",  # lab `where:`, card `exercise:`
    4: "7c824eaaa07dbcac",  # same models; a bad card no longer leaves its whole file out
    5: "45d559144aee8c97",  # card `numbers:` (drill.decks.numbers)
}


def _schema_hash() -> str:
    schema = json.dumps(Deck.model_json_schema(), sort_keys=True)
    return hashlib.sha256(schema.encode()).hexdigest()[:16]


def test_schema_version_names_the_models_it_was_made_for() -> None:
    assert SCHEMA_HASHES.get(cache.DECK_SCHEMA_VERSION) == _schema_hash(), (
        "drill/decks/models.py changed: bump DECK_SCHEMA_VERSION and record the new hash"
    )


def test_cache_shape_tables_name_every_model_field() -> None:
    assert set(cache.DECK_FIELDS) == set(Deck.model_fields)
    assert set(cache.CARD_FIELDS) == set(Card.model_fields)
    assert set(cache.LAB_FIELDS) == set(LabLink.model_fields)
    assert set(cache.PREDICT_FIELDS) == set(Predict.model_fields)
    assert set(cache.NUMBERS_FIELDS) == set(Numbers.model_fields)
    assert set(cache.NUMBER_VAR_FIELDS) == set(NumberVar.model_fields)


def _stored() -> dict[str, Any]:
    return json.loads(cache.cache_path().read_text())


def test_cache_is_plain_json_keyed_by_the_schema_version(deck_dir: Path) -> None:
    load_decks([deck_dir], include_bundled=False)
    stored = _stored()
    assert stored["format"] == "drill-deck-cache"
    assert stored["schema"] == cache.DECK_SCHEMA_VERSION
    (entry,) = stored["entries"].values()
    assert entry["deck"]["cards"][1]["front"] == "What is beta?"
    assert load_index([deck_dir], include_bundled=False) is not None


class _Payload:
    """Unpickling this would create the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def test_a_crafted_pickle_is_never_unpickled(deck_dir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    cache_dir().mkdir(parents=True)
    payload = pickle.dumps(_Payload(marker))
    (cache_dir() / "decks.pickle").write_bytes(payload)  # the old cache's name
    cache.cache_path().write_bytes(payload)
    assert load_index([deck_dir], include_bundled=False) is None
    assert load_decks([deck_dir], include_bundled=False).card("alpha") is not None
    assert first_paint([deck_dir], include_bundled=False) is not None
    assert not marker.exists()


@pytest.mark.parametrize(
    "content",
    [
        b"\x80\x04\x95garbage",
        b"{truncated",
        b"[" * 100_000,  # RecursionError in json
        b"\xff\xfe not utf-8",
        b'{"format": "drill-deck-cache", "schema": 1, "entries": {}}',
        b'{"format": "drill-deck-cache", "schema": 2, "entries": []}',
        b"NaN",
        b"",
    ],
)
def test_a_damaged_cache_is_ignored_and_rebuilt(deck_dir: Path, content: bytes) -> None:
    cache_dir().mkdir(parents=True)
    cache.cache_path().write_bytes(content)
    assert load_index([deck_dir], include_bundled=False) is None
    assert load_decks([deck_dir], include_bundled=False).card("beta") is not None
    index = load_index([deck_dir], include_bundled=False)  # rebuilt
    assert index is not None and index.card_record("beta") is not None


def _tamper(change: Any) -> None:
    stored = _stored()
    for entry in stored["entries"].values():
        change(entry)
    cache.cache_path().write_text(json.dumps(stored))


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e["deck"]["cards"][0].update(tags="not a list"),
        lambda e: e["deck"]["cards"][0].update(level="extreme"),
        lambda e: e["deck"]["cards"][0].update(lab={"run": "x", "params": {"a": [1]}}),
        lambda e: e["deck"]["cards"][0].update(extra="key"),
        lambda e: e["deck"]["cards"][0].pop("front"),
        lambda e: e["hashes"].pop("alpha"),
        lambda e: e.update(mtime_ns="soon"),
        lambda e: e.update(problems=[["line", None, "m"]]),
        # the checks that compare types inline (issue 40) and the optional fields
        lambda e: e["deck"]["cards"][0].update(tags=["ok", 1]),
        lambda e: e["deck"]["cards"][0].update(rubric=[None]),
        lambda e: e["deck"]["cards"][0].update(exercise=5),
        lambda e: e["deck"]["cards"][0].update(front=None),
        lambda e: e.update(deck_line=1.0),
        lambda e: e["deck"]["cards"][0].update(predict={"ask": "q", "choices": [{"text": "a"}]}),
        lambda e: e["card_lines"].update(alpha=True),
        lambda e: e["field_lines"].update(alpha={"id": "4"}),
        lambda e: e["hashes"].update(alpha=7),
    ],
)
def test_an_off_shape_entry_is_not_served(deck_dir: Path, change: Any) -> None:
    load_decks([deck_dir], include_bundled=False)
    _tamper(change)
    assert load_index([deck_dir], include_bundled=False) is None
    decks = load_decks([deck_dir], include_bundled=False)
    assert [c.id for d in decks.decks for c in d.deck.cards] == ["alpha", "beta", "gamma"]


def test_a_non_finite_number_in_the_cache_is_not_served(deck_dir: Path) -> None:
    (deck_dir / "lab.yaml").write_text(
        "deck: l\ntitle: L\ncards:\n  - id: l1\n    level: easy\n    front: Q\n    back: A\n"
        "    lab: {run: resume, params: {lr: 0.5}}\n"
    )
    load_decks([deck_dir], include_bundled=False)
    text = cache.cache_path().read_text()
    assert '"lr":0.5' in text
    cache.cache_path().write_text(text.replace('"lr":0.5', '"lr":1e999'))
    assert load_index([deck_dir], include_bundled=False) is None
    cache.cache_path().write_text(text.replace('"lr":0.5', '"lr":NaN'))
    assert load_index([deck_dir], include_bundled=False) is None


def test_an_unwritable_cache_only_costs_speed(deck_dir: Path, drill_home: Path) -> None:
    drill_home.mkdir(parents=True)
    (drill_home / "cache").write_text("a file where the cache directory should be")
    decks = load_decks([deck_dir], include_bundled=False)
    assert decks.card("alpha") is not None
    assert load_index([deck_dir], include_bundled=False) is None
    # once the decks are loaded, the first paint is served from them, not from the cache
    paint = first_paint([deck_dir], include_bundled=False, index=decks.index)
    assert paint is not None and [s.deck_id for s in paint.summaries] == ["basics"]


def test_problem_files_are_served_from_the_cache_too(deck_dir: Path) -> None:
    (deck_dir / "latin1.yaml").write_bytes("deck: caf\xe9\n".encode("latin-1"))
    os.symlink("nowhere.yaml", deck_dir / "broken.yaml")
    load_decks([deck_dir], include_bundled=False)
    index = load_index([deck_dir], include_bundled=False)
    assert index is not None
    assert sorted(p.name for p in index.invalid_paths) == ["broken.yaml", "latin1.yaml"]
    assert [o.deck_id for o in index.outline()] == ["basics"]

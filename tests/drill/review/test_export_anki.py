"""`write_apkg` makes a real Anki package: imported into a fresh anki Collection it gives one
note per card with rendered fields, the tags, drill::<deck> decks; a re-export updates the
notes instead of duplicating them; deck HTML is escaped, in the fields and in the deck
description (the title), which Anki renders as HTML too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest
from anki.import_export_pb2 import IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER

from drill.decks.loader import load_decks
from drill.decks.models import Deck
from drill.review.export_anki import write_apkg
from tests.support.hostile_decks import HTML, control_chars, write_hostile_text_deck

NETWORK = Deck.model_validate(
    {
        "deck": "networking",
        "title": "Networking",
        "cards": [
            {
                "id": "ring-allreduce",
                "level": "hard",
                "tags": ["collectives", "all reduce"],
                "front": "What does a **ring** all-reduce send per rank?",
                "back": "About `2(N-1)/N` times the buffer.\n\n- reduce-scatter\n- all-gather",
                "more": "Bandwidth-optimal; latency grows with N.",
            },
            {"id": "nccl", "level": "easy", "front": "NCCL <b>is</b>?", "back": "A library."},
        ],
    }
)
BASICS = Deck.model_validate(
    {
        "deck": "basics",
        "title": "Basics",
        "cards": [{"id": "alpha", "level": "easy", "front": "Alpha?", "back": "First."}],
    }
)


@pytest.fixture
def collection(tmp_path: Path) -> Iterator[Collection]:
    (tmp_path / "anki").mkdir()
    col = Collection(str(tmp_path / "anki" / "collection.anki2"))
    yield col
    col.close()


def _import(col: Collection, package: Path):  # type: ignore[no-untyped-def]
    """Import as Anki does by default: a note is updated when the package's copy is newer."""
    options = ImportAnkiPackageOptions(
        with_scheduling=False,
        update_notes=IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER,
        update_notetypes=IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER,
    )
    request = ImportAnkiPackageRequest(package_path=str(package), options=options)
    return col.import_anki_package(request).log


def _notes(col: Collection) -> dict[str, dict[str, object]]:
    notes = {}
    for note_id in col.find_notes(""):
        note = col.get_note(note_id)
        fields = dict(note.items())
        decks = {col.decks.name(card.did) for card in note.cards()}
        notes[fields["DrillId"]] = {"fields": fields, "tags": sorted(note.tags), "decks": decks}
    return notes


def test_anki_imports_every_card_with_fields_tags_and_decks(
    tmp_path: Path, collection: Collection
) -> None:
    out, count = write_apkg([NETWORK, BASICS], tmp_path / "drill.apkg")
    assert count == 3
    log = _import(collection, out)
    assert len(log.new) == 3 and collection.note_count() == 3
    notes = _notes(collection)
    ring = notes["ring-allreduce"]
    assert ring["decks"] == {"drill::networking"}
    assert ring["tags"] == ["all_reduce", "collectives"]
    fields = ring["fields"]
    assert isinstance(fields, dict)
    assert fields["Front"] == "<p>What does a <strong>ring</strong> all-reduce send per rank?</p>"
    assert "<code>2(N-1)/N</code>" in fields["Back"] and "<li>reduce-scatter</li>" in fields["Back"]
    assert fields["More"] == "<p>Bandwidth-optimal; latency grows with N.</p>"
    assert notes["alpha"]["decks"] == {"drill::basics"}
    nccl = notes["nccl"]["fields"]
    assert isinstance(nccl, dict)
    assert nccl["Front"] == "<p>NCCL &lt;b&gt;is&lt;/b&gt;?</p>" and nccl["More"] == ""
    names = {d.name for d in collection.decks.all_names_and_ids()}
    assert {"drill::networking", "drill::basics"} <= names


def test_a_re_export_updates_the_notes_instead_of_duplicating(
    tmp_path: Path, collection: Collection
) -> None:
    first = write_apkg([NETWORK], tmp_path / "one.apkg", timestamp=1_767_000_000)[0]
    _import(collection, first)
    nccl = NETWORK.cards[1].model_copy(update={"front": "What is NCCL?"})
    edited = NETWORK.model_copy(update={"cards": [NETWORK.cards[0], nccl]})
    second = write_apkg([edited], tmp_path / "two.apkg", timestamp=1_767_000_060)[0]  # 1 min on
    log = _import(collection, second)
    assert len(log.new) == 0 and len(log.updated) == 2
    assert collection.note_count() == 2
    assert _notes(collection)["nccl"]["fields"]["Front"] == "<p>What is NCCL?</p>"  # type: ignore[index]


def test_hostile_text_is_escaped_html_in_the_deck_description_and_the_fields(
    tmp_path: Path, collection: Collection
) -> None:
    write_hostile_text_deck(tmp_path / "decks")
    loaded = load_decks([tmp_path / "decks"]).deck("hostile")
    assert loaded is not None
    out, _ = write_apkg([loaded.deck], tmp_path / "hostile.apkg")
    _import(collection, out)
    deck = collection.decks.by_name("drill::hostile")
    assert deck is not None
    description = deck["desc"]  # Anki renders it as HTML on the deck's overview
    assert "<img" not in description and "&lt;img src=x onerror=alert(1)&gt;" in description
    assert "C++ [advanced] [/x]" in description and control_chars(description) == []
    for note in _notes(collection).values():
        fields = note["fields"]
        assert isinstance(fields, dict)
        for name in ("Front", "Back", "DrillId"):
            assert "<img" not in str(fields[name]) and HTML not in str(fields[name])
        assert "&lt;img src=x onerror=alert(1)&gt;" in str(fields["Front"])


def test_a_numbers_card_exports_one_fixed_drawing(tmp_path: Path, collection: Collection) -> None:
    card = {
        "id": "ring-time",
        "level": "easy",
        "front": "Send {size} MB at {bw} MB/s: seconds?",
        "back": "{size} / {bw} s.",
        "numbers": {
            "vars": {"size": {"min": 10, "max": 90, "step": 10}, "bw": {"choices": [2, 4, 5]}},
            "answer": "size / bw",
            "unit": "s",
        },
    }
    deck = Deck.model_validate({"deck": "numbers", "title": "Numbers", "cards": [card]})
    out = write_apkg([deck], tmp_path / "one.apkg")[0]
    _import(collection, out)
    fields = _notes(collection)["ring-time"]["fields"]
    assert isinstance(fields, dict)
    size, bw = re.fullmatch(
        r"<p>Send (\d+) MB at (\d) MB/s: seconds\?</p>", fields["Front"]
    ).groups()
    assert f"<strong>Answer: {int(size) / int(bw):.3g} s</strong>" in fields["Back"]
    again = write_apkg([deck], tmp_path / "two.apkg")[0]  # the same drawing every export
    assert again.read_bytes() != b"" and _fields_of(again, tmp_path) == fields


def _fields_of(package: Path, tmp_path: Path) -> dict[str, object]:
    (tmp_path / "again").mkdir()
    col = Collection(str(tmp_path / "again" / "collection.anki2"))
    try:
        _import(col, package)
        return _notes(col)["ring-time"]["fields"]  # type: ignore[return-value]
    finally:
        col.close()

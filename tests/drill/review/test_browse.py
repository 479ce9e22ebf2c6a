"""The browser service: query parsing, search over rows, row actions against a real database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.review.browse import (
    build_rows,
    history_lines,
    parse_query,
    reset_schedule,
    search,
    set_buried,
    set_suspended,
)
from storage.db import open_database
from tests.support.review_logs import LogBuilder, write_browse_decks

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def rows_and_db(tmp_path: Path):  # type: ignore[no-untyped-def]
    decks = load_decks([write_browse_decks(tmp_path / "decks")], include_bundled=False)
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("fsdp-shard", "infra", due=NOW - timedelta(days=1), interval_days=30, lapses=9,
             leech=True)  # fmt: skip
    log.card("ddp-bucket", "infra", due=NOW + timedelta(days=2), interval_days=3)
    log.card("msa-depth", "biotech", due=NOW - timedelta(hours=1), suspended=True)
    log.card("assay-noise", "biotech", due=NOW - timedelta(hours=1),
             buried_until=NOW + timedelta(hours=5))  # fmt: skip
    log.review("fsdp-shard", "infra", NOW - timedelta(days=31), 3, 10.0)
    log.review("fsdp-shard", "infra", NOW - timedelta(days=1), 1, 30.0)
    path = log.write()
    return decks, build_rows(decks, path), path


def ids(rows: list) -> list[str]:  # type: ignore[type-arg]
    return [r.card_id for r in rows]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["msa-depth", "assay-noise", "fsdp-shard", "ddp-bucket", "resume-state"]),
        ("tag:fsdp", ["fsdp-shard", "resume-state"]),
        ("TAG:FSDP level:hard deck:infra", ["fsdp-shard", "resume-state"]),
        ("deck:bio", ["msa-depth", "assay-noise"]),  # bio.yaml sorts first
        ("deck:biotech level:easy", ["msa-depth"]),
        ("is:suspended", ["msa-depth"]),
        ("is:buried", ["assay-noise"]),
        ("is:due", ["fsdp-shard"]),  # suspended and buried cards are not due
        ("is:new", ["resume-state"]),
        ("is:leech", ["fsdp-shard"]),
        ("tag:leech", ["fsdp-shard"]),  # a leech counts as tagged leech, as in Anki
        ("leech", ["fsdp-shard"]),
        ("is:mature", ["fsdp-shard"]),
        ("is:young", ["msa-depth", "assay-noise", "ddp-bucket"]),
        ("optimizer state", ["fsdp-shard", "resume-state"]),  # words: AND, over the back too
        ('"optimizer state"', ["fsdp-shard", "resume-state"]),
        ('"sampler position"', ["resume-state"]),
        ('"position sampler"', []),
        ("protein noise", ["assay-noise"]),
        ("biotech", ["msa-depth", "assay-noise"]),  # deck id is searched
        ("mature", ["fsdp-shard"]),  # so is the state
        ('tag:"memory"', ["fsdp-shard"]),
    ],
)
def test_search(rows_and_db, query: str, expected: list[str]) -> None:  # type: ignore[no-untyped-def]
    _decks, rows, _path = rows_and_db
    found, parsed = search(rows, query, NOW)
    assert ids(found) == expected
    assert parsed.hint is None


@pytest.mark.parametrize(
    ("query", "hint", "still"),
    [
        ("colour:red fsdp", "unknown filter colour:", 2),
        ("is:angry", "is:angry?", 5),
        ("level:extreme tag:ddp", "level:extreme?", 1),
        ('"optimizer state', "unclosed quote", 2),
        ("tag:", "tag: needs a value", 5),
    ],
)
def test_bad_terms_give_a_hint_and_the_rest_applies(rows_and_db, query, hint, still) -> None:  # type: ignore[no-untyped-def]
    _decks, rows, _path = rows_and_db
    found, parsed = search(rows, query, NOW)
    assert parsed.hint is not None and hint in parsed.hint and "\n" not in parsed.hint
    assert len(found) == still


def test_parse_query_keeps_quoted_phrases() -> None:
    query = parse_query('tag:"two words" "a phrase" plain')
    assert query.tags == ("two words",)
    assert query.words == ("a phrase", "plain")


def test_rows_know_their_file_and_line(rows_and_db) -> None:  # type: ignore[no-untyped-def]
    _decks, rows, _path = rows_and_db
    row = next(r for r in rows if r.card_id == "ddp-bucket")
    assert row.path is not None and row.path.name == "infra.yaml"
    assert row.path.read_text().splitlines()[row.line - 1].strip() == "- id: ddp-bucket"
    assert next(r for r in rows if r.card_id == "resume-state").has_lab


def test_row_actions_change_the_database(rows_and_db) -> None:  # type: ignore[no-untyped-def]
    decks, rows, path = rows_and_db
    db = open_database(path)
    try:
        by_id = {r.card_id: r for r in rows}
        set_suspended(db, by_id["resume-state"], True)  # a new card gets a flag-only row
        set_suspended(db, by_id["msa-depth"], False)
        set_buried(db, by_id["ddp-bucket"], NOW + timedelta(days=1))
        set_buried(db, by_id["assay-noise"], None)
        assert reset_schedule(db, by_id["fsdp-shard"])
        rows = build_rows(decks, path)
        assert ids(search(rows, "is:suspended", NOW)[0]) == ["resume-state"]
        assert ids(search(rows, "is:buried", NOW)[0]) == ["ddp-bucket"]
        assert ids(search(rows, "is:new", NOW)[0]) == ["fsdp-shard", "resume-state"]
        assert ids(search(rows, "is:leech", NOW)[0]) == []
        state = db.review.card_state("fsdp-shard")
        assert state is not None and state["lapses"] == 0 and state["due"] is None
        assert len(db.review.reviews("fsdp-shard")) == 2  # history is kept
    finally:
        db.close()


def test_reset_of_a_card_without_schedule_is_false(rows_and_db) -> None:  # type: ignore[no-untyped-def]
    _decks, rows, path = rows_and_db
    db = open_database(path)
    try:
        assert reset_schedule(db, next(r for r in rows if r.card_id == "resume-state")) is False
    finally:
        db.close()


def test_history_lines_newest_first(rows_and_db) -> None:  # type: ignore[no-untyped-def]
    _decks, _rows, path = rows_and_db
    lines = history_lines(path, "fsdp-shard")
    assert len(lines) == 2 and "Again" in lines[0] and "Good" in lines[1]
    assert history_lines(path, "msa-depth") == []
    assert history_lines(path.parent / "missing.sqlite3", "x") == []


# --- negation: `-term`, as in Anki's search ---------------------------------------------------
ALL_IDS = ["msa-depth", "assay-noise", "fsdp-shard", "ddp-bucket", "resume-state"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("-tag:fsdp", ["msa-depth", "assay-noise", "ddp-bucket"]),
        ("-is:suspended", [c for c in ALL_IDS if c != "msa-depth"]),
        ("-is:suspended -is:buried", ["fsdp-shard", "ddp-bucket", "resume-state"]),
        ("-deck:bio", ["fsdp-shard", "ddp-bucket", "resume-state"]),
        ("-deck:biotech level:medium", ["ddp-bucket"]),
        ("-level:hard", ["msa-depth", "assay-noise", "ddp-bucket"]),
        ("tag:fsdp -is:leech", ["resume-state"]),
        ("-tag:leech", [c for c in ALL_IDS if c != "fsdp-shard"]),
        ("-optimizer", ["msa-depth", "assay-noise", "ddp-bucket"]),  # a negated plain word
        ('-"sampler position"', [c for c in ALL_IDS if c != "resume-state"]),
        ("-is:new -is:mature", ["msa-depth", "assay-noise", "ddp-bucket"]),
        ("all-reduce -tag:fsdp", ["ddp-bucket"]),  # a - inside a word is the word's own
        ("-", ALL_IDS),  # a negation still being typed excludes nothing yet
    ],
)
def test_negated_terms_exclude_what_they_name(rows_and_db, query: str, expected) -> None:  # type: ignore[no-untyped-def]
    _decks, rows, _path = rows_and_db
    found, parsed = search(rows, query, NOW)
    assert ids(found) == expected
    assert parsed.hint is None


def test_a_bad_negated_term_is_named_with_its_minus(rows_and_db) -> None:  # type: ignore[no-untyped-def]
    _decks, rows, _path = rows_and_db
    found, parsed = search(rows, "-is:angry -tag:fsdp", NOW)
    assert parsed.hint is not None and "-is:angry?" in parsed.hint
    assert ids(found) == ["msa-depth", "assay-noise", "ddp-bucket"]


def test_parse_keeps_negated_terms_apart() -> None:
    query = parse_query('tag:a -tag:b -"x y" z')
    assert query.tags == ("a",) and query.words == ("z",)
    assert query.negated.tags == ("b",) and query.negated.words == ("x y",)

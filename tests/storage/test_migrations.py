"""One versioned schema for every table: the SQLModel classes match what the migrations create,
a database written by the previous schema (v2) migrates with its rows, one from the future is
refused without being touched."""

from __future__ import annotations

import importlib
import pkgutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import SQLModel, select

import storage
from storage.db import DatabaseError, open_database
from storage.integrity import _schema, expected_schema
from storage.migrations import LATEST_VERSION, migrate
from storage.mock_tables import MockGrade, MockPrompt, MockReport, MockRound
from storage.snapshot import read_snapshot

SCHEMA_V2 = Path(__file__).with_name("schema_v2.sql")
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _all_table_modules() -> list[str]:
    names = [m.name for m in pkgutil.iter_modules(storage.__path__) if m.name.endswith("tables")]
    for name in names:
        importlib.import_module(f"storage.{name}")
    return names


def test_schema_version_is_8() -> None:
    assert LATEST_VERSION == 8


def test_every_sqlmodel_table_is_created_by_the_migrations() -> None:
    assert {"tables", "mock_tables", "exercise_tables", "run_tables", "plan_tables"} <= set(
        _all_table_modules()
    )
    migrated = expected_schema(LATEST_VERSION)
    for name, table in SQLModel.metadata.tables.items():
        assert name in migrated, f"{name} has a model but no migration creates it"
        columns, indexes = migrated[name]
        assert [c[0] for c in columns] == [c.name for c in table.columns], name
        not_null = {c[0] for c in columns if c[2] or c[4]}
        assert not_null == {c.name for c in table.columns if not c.nullable}, name
        assert {i.name for i in table.indexes} <= indexes, name


def _write_v2_database(path: Path) -> None:
    """A file exactly as the code before v3 left it, holding a row in every table."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(SCHEMA_V2.read_text())
    conn.executescript(
        """
        INSERT INTO card_state (card_id, deck_id, state, stability, difficulty, due, reps,
            lapses, suspended, content_hash, introduced_at)
            VALUES ('alpha', 'basics', 2, 3.0, 5.0, '2026-03-05 12:00:00.000000', 1, 0, 0, 'h1',
                    '2026-03-02 12:00:00.000000');
        INSERT INTO review_log (card_id, deck_id, rating, reviewed_at, duration_ms,
            state_after, content_hash)
            VALUES ('alpha', 'basics', 3, '2026-03-02 12:00:00.000000', 1500, '{}', 'h1');
        INSERT INTO mock_round (id, round_key, title, status, definition_json, budgets_json,
            clock_json, started_at, updated_at)
            VALUES (1, 'standard', 'Standard', 'done', '{}', '[]', '{}',
                    '2026-03-02 12:00:00.000000', '2026-03-02 12:55:00.000000');
        INSERT INTO mock_prompt (id, round_id, phase_index, position, prompt_key, text,
            rubric_json, answer) VALUES (1, 1, 0, 0, 'clarify', 'Ask?', '[]', 'my answer');
        INSERT INTO mock_grade (prompt_id, bullet_index, bullet, auto_status, checked)
            VALUES (1, 0, 'scope', 'covered', 1);
        INSERT INTO mock_report (round_id, created_at, overall_band, overall_score,
            report_json) VALUES (1, '2026-03-02 12:56:00.000000', 'solid', 0.75, '{}');
        INSERT INTO lab_run (lab, params_json, world_size, started_at, status, summary_json,
            run_dir, rating) VALUES ('resume', '{}', 2, '2026-03-02 13:00:00.000000', 'ok',
            '{}', '/runs/resume-1', 3);
        """
    )
    conn.close()


def test_a_v2_database_migrates_to_the_latest_and_keeps_every_row(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite3"
    _write_v2_database(path)
    assert read_snapshot(path) is None  # the light reader leaves an old schema to the slow path

    db = open_database(path)
    state = db.review.card_state("alpha")
    assert state is not None and state["due"] == datetime(2026, 3, 5, 12, tzinfo=UTC)
    assert [(r.rating, r.duration_ms) for r in db.review.reviews("alpha")] == [(3, 1500)]
    with db.session() as session:
        (mock,) = session.exec(select(MockRound)).all()
        assert (mock.round_key, mock.status) == ("standard", "done")
        assert session.exec(select(MockPrompt)).one().answer == "my answer"
        assert session.exec(select(MockGrade)).one().checked is True
        assert session.exec(select(MockReport)).one().overall_score == 0.75
    (lab,) = db.runs.find()
    assert (lab.kind, lab.name, lab.rating, lab.run_dir) == ("lab", "resume", 3, "/runs/resume-1")
    db.runs.start("lab", "ddp", {}, 2, "/runs/ddp-1", T0)
    db.close()

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
    # same tables, columns and indexes as a new file
    assert _schema(conn) == expected_schema(LATEST_VERSION)
    assert conn.execute("SELECT count(*) FROM run_log").fetchone()[0] == 2
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_v2_database_without_mock_and_lab_tables_gets_them(tmp_path: Path) -> None:
    path = tmp_path / "core-only.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=2)
    conn.close()
    db = open_database(path)
    db.runs.start("lab", "ddp", {}, 2, "/runs/ddp-1", T0)
    assert [r.name for r in db.runs.find(kinds=["lab"])] == ["ddp"]
    db.close()
    assert _schema(sqlite3.connect(path)) == expected_schema(LATEST_VERSION)


def test_a_database_from_the_future_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE card_state (card_id TEXT PRIMARY KEY, shiny_new_column BLOB)")
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(DatabaseError) as caught:
        open_database(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    assert f"schema version {LATEST_VERSION + 1}, newer than this drill supports" in message
    assert read_snapshot(path) is None  # no error on first paint; the slow path says why
    assert path.read_bytes() == before


def test_opening_twice_migrates_once(tmp_path: Path) -> None:
    path = tmp_path / "twice.sqlite3"
    open_database(path).close()
    schema = _schema(sqlite3.connect(path))
    open_database(path).close()
    assert _schema(sqlite3.connect(path)) == schema == expected_schema(LATEST_VERSION)

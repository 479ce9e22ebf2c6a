"""Is a file a sound drill database? `drill db check` and restore validation. Stdlib only.

A database passes when SQLite's integrity_check and foreign_key_check find nothing and its
tables have the columns and indexes that storage.migrations gives a database of its version,
and every row holds values in its columns' domains (storage.domains).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path

from storage.domains import (
    TABLE_DOMAINS,
    card_state_problems,
    review_log_problems,
    shown,
    table_problems,
)
from storage.errors import DatabaseError, one_line, space_note
from storage.migrations import LATEST_VERSION, migrate, schema_version
from storage.schema_names import CARD_STATE, EXERCISE_PROGRESS, MOCK_REPORT, REVIEW_LOG

MAX_INTEGRITY_LINES = 20
VALUES = "values: "  # the prefix of a value problem
MAX_VALUE_LINES = 20  # rows with values outside their domains, listed one line each


def connect_readonly(path: Path, timeout_s: float = 10.0) -> sqlite3.Connection:
    """A read-only connection (never creates the file); `path` may hold any characters."""
    uri = path.resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=timeout_s, isolation_level=None)


def expected_schema(version: int) -> dict[str, tuple[list[tuple], set[str]]]:  # type: ignore[type-arg]
    """Table -> (columns, index names) of a database that the migrations brought to `version`."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(conn, target=version)
        return _schema(conn)
    finally:
        conn.close()


def _schema(conn: sqlite3.Connection) -> dict[str, tuple[list[tuple], set[str]]]:  # type: ignore[type-arg]
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    found = {}
    for table in tables:
        # (name, declared type, not null, default, primary-key position)
        columns = [tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info('{table}')")]
        indexes = {
            row[1]
            for row in conn.execute(f"PRAGMA index_list('{table}')")
            if not row[1].startswith("sqlite_autoindex")
        }
        found[table] = (columns, indexes)
    return found


def _foreign_objects(
    conn: sqlite3.Connection, expected: dict[str, tuple[list[tuple], set[str]]]
) -> list[str]:  # type: ignore[type-arg]
    """Triggers, views, tables and indexes that the migrations do not create: a database (or a
    backup about to be restored) holds drill's data only, never code that runs on a write."""
    problems = []
    for kind, name, table in conn.execute(
        "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ):
        if kind in ("trigger", "view"):
            problems.append(f"schema: {kind} {name} is not drill's (drill creates none)")
        elif kind == "table" and name not in expected:
            problems.append(f"schema: table {name} is not drill's")
        elif kind == "index" and table in expected and name not in expected[table][1]:
            problems.append(f"schema: index {name} on {table} is not drill's")
    return problems


def _schema_problems(conn: sqlite3.Connection, version: int) -> list[str]:
    actual = _schema(conn)
    expected = expected_schema(version)
    problems = _foreign_objects(conn, expected)
    for table, (columns, indexes) in expected.items():
        if table not in actual:
            problems.append(f"schema: table {table} is missing")
            continue
        have_columns, have_indexes = actual[table]
        if have_columns != columns:
            want = ", ".join(c[0] for c in columns)
            have = ", ".join(c[0] for c in have_columns)
            problems.append(f"schema: table {table} has columns ({have}), expected ({want})")
        for index in sorted(indexes - have_indexes):
            problems.append(f"schema: index {index} on {table} is missing")
    return problems


def check_database(path: Path) -> tuple[int | None, list[str]]:
    """(schema version, problems one line each); no problems means the database is sound.
    The version is None when the file cannot be read as SQLite at all."""
    try:
        conn = connect_readonly(path)
        version = schema_version(conn)
    except sqlite3.Error as error:
        return None, [f"cannot open: {one_line(error)}{space_note(path)}"]
    try:
        problems = _integrity_problems(conn)
        if version > LATEST_VERSION:
            problems.append(
                f"schema version {version} is newer than this drill supports ({LATEST_VERSION})"
            )
        elif version < 0:
            problems.append(
                f"schema version {version} is not one drill writes (1..{LATEST_VERSION})"
            )
        elif version == 0:
            problems.append("not a drill database (schema version 0)")
        else:
            schema = _guarded("schema", lambda: _schema_problems(conn, version))
            problems.extend(schema)
            if not schema:
                problems.extend(_guarded("values", lambda: _value_problems(conn)))
        problems.extend(_guarded("foreign key", lambda: _foreign_key_problems(conn)))
        return version, problems
    finally:
        conn.close()


def _guarded(what: str, check: Callable[[], list[str]]) -> list[str]:
    try:
        return check()
    except sqlite3.Error as error:  # the damage stops SQLite from reading what it needs
        return [f"{what}: {one_line(error)}"]


def _integrity_problems(conn: sqlite3.Connection) -> list[str]:
    def check() -> list[str]:
        rows = conn.execute(f"PRAGMA integrity_check({MAX_INTEGRITY_LINES})").fetchall()
        return [f"integrity: {one_line(row[0])}" for row in rows if row[0] != "ok"]

    return _guarded("integrity", check)


def _value_problems(conn: sqlite3.Connection) -> list[str]:
    """Rows of every table holding values drill never writes (storage.domains): the first
    MAX_VALUE_LINES one line each, then how many more."""
    present = {
        row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    checks: list[tuple[str, Callable[[dict], list[str]]]] = [
        (CARD_STATE, card_state_problems),
        (REVIEW_LOG, review_log_problems),
        *((table, partial(table_problems, table)) for table in TABLE_DOMAINS),
    ]
    found: list[str] = []
    more = 0
    for table, check in checks:
        if table not in present:  # an older schema (migrated on open)
            continue
        cursor = conn.execute(f"SELECT * FROM {table}")
        names = [column[0] for column in cursor.description]
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            bad = check(row)
            if not bad:
                continue
            if len(found) >= MAX_VALUE_LINES:
                more += 1
                continue
            found.append(f"{VALUES}{_row_label(table, row)}: {'; '.join(bad)}")
    if more:
        found.append(f"{VALUES}{more} more row(s) with values outside their domains")
    return found


def _row_label(table: str, row: dict) -> str:
    """How a message names a row: its card for the review tables, else its key."""
    if table == CARD_STATE:
        return f"{table} card {shown(row.get('card_id'))}"
    if table == REVIEW_LOG:
        return f"{table} row {row['id']} (card {shown(row.get('card_id'))})"
    if table == EXERCISE_PROGRESS:
        return f"{table} exercise {shown(row.get('name'))}"
    if table == MOCK_REPORT:
        return f"{table} round {shown(row.get('round_id'))}"
    return f"{table} row {shown(row.get('id'))}"


def _foreign_key_problems(conn: sqlite3.Connection) -> list[str]:
    return [
        f"foreign key: {table} row {rowid} refers to a missing {parent} row"
        for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check")
    ]


def validate_database(path: Path) -> int:
    """The schema version of a sound drill database at `path` (1..LATEST_VERSION); else a
    DatabaseError naming the first problem."""
    if not path.exists():
        raise DatabaseError(f"{path}: no such file")
    if not path.is_file():  # a FIFO would block SQLite, a device could be read forever
        raise DatabaseError(f"{path} is not a regular file")
    version, problems = check_database(path)
    # Rows outside their domains do not stop a restore: the app skips those cards with a
    # notice, and `drill db check` lists them; the rest of the backup is the user's history.
    problems = [p for p in problems if not p.startswith(VALUES)]
    if problems:
        more = f" (and {len(problems) - 1} more; see: drill db check)" if len(problems) > 1 else ""
        raise DatabaseError(f"{path} is not a usable drill database: {problems[0]}{more}")
    assert version is not None
    return version

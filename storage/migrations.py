"""Schema migrations for every table (review, mock rounds, exercises, the run log), tracked in
PRAGMA user_version. This is the only place tables are created: open_database() runs no
create_all, and every caller migrates through `migrate_file` (open_database, restore, the light
`drill due` path).

Each step moves the database from version N-1 to N and is applied in its own IMMEDIATE
transaction, so two copies of drill opening an old database at once migrate it exactly once.
Never edit a released step; append a new one (and a test that migrates the previous version's
file, see tests/storage/test_migrations.py). The SQLModel classes in storage/*tables.py mirror
the latest schema; a test checks every one of them against a freshly migrated database.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from storage.errors import DatabaseError, is_write_failure, one_line, space_note
from storage.schema_names import (
    CARD_STATE,
    EXERCISE_ATTEMPT,
    EXERCISE_PROGRESS,
    INTERVIEW_PLAN,
    LAB_RUN,
    MOCK_GRADE,
    MOCK_PROMPT,
    MOCK_REPORT,
    MOCK_ROUND,
    REVIEW_LOG,
    RUN_LOG,
)

BUSY_TIMEOUT_MS = 10_000

V1 = [
    f"""CREATE TABLE {CARD_STATE} (
        card_id VARCHAR NOT NULL PRIMARY KEY,
        deck_id VARCHAR NOT NULL,
        state INTEGER,
        step INTEGER,
        stability FLOAT,
        difficulty FLOAT,
        due DATETIME,
        last_review DATETIME,
        reps INTEGER NOT NULL DEFAULT 0,
        lapses INTEGER NOT NULL DEFAULT 0,
        suspended BOOLEAN NOT NULL DEFAULT 0,
        buried_until DATETIME,
        content_hash VARCHAR
    )""",
    f"CREATE INDEX ix_{CARD_STATE}_due ON {CARD_STATE} (due)",
    f"""CREATE TABLE {REVIEW_LOG} (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        card_id VARCHAR NOT NULL,
        deck_id VARCHAR NOT NULL,
        rating INTEGER NOT NULL,
        reviewed_at DATETIME NOT NULL,
        duration_ms INTEGER NOT NULL,
        state_before VARCHAR,
        state_after VARCHAR NOT NULL
    )""",
    f"CREATE INDEX ix_{REVIEW_LOG}_card_id ON {REVIEW_LOG} (card_id)",
]

# v2: the daily new-card limit needs to know when a card was first reviewed, and each log row
# records which text version of the card was reviewed.
V2 = [
    f"ALTER TABLE {CARD_STATE} ADD COLUMN introduced_at DATETIME",
    f"ALTER TABLE {REVIEW_LOG} ADD COLUMN content_hash VARCHAR",
    f"""UPDATE {CARD_STATE} SET introduced_at = (
        SELECT MIN(reviewed_at) FROM {REVIEW_LOG} WHERE {REVIEW_LOG}.card_id = {CARD_STATE}.card_id
    )""",
    f"CREATE INDEX ix_{CARD_STATE}_introduced_at ON {CARD_STATE} (introduced_at)",
]

# v3: the mock-round and lab-run tables join the versioned schema. Until v2 SQLModel's
# create_all made them on open, so a v2 file usually has them already (same columns as below):
# IF NOT EXISTS keeps those tables and their rows.
V3 = [
    f"""CREATE TABLE IF NOT EXISTS {MOCK_ROUND} (
        id INTEGER NOT NULL PRIMARY KEY,
        round_key VARCHAR NOT NULL,
        title VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        definition_json VARCHAR NOT NULL,
        budgets_json VARCHAR NOT NULL,
        clock_json VARCHAR NOT NULL,
        started_at DATETIME NOT NULL,
        updated_at DATETIME NOT NULL,
        finished_at DATETIME
    )""",
    f"CREATE INDEX IF NOT EXISTS ix_{MOCK_ROUND}_round_key ON {MOCK_ROUND} (round_key)",
    f"CREATE INDEX IF NOT EXISTS ix_{MOCK_ROUND}_status ON {MOCK_ROUND} (status)",
    f"""CREATE TABLE IF NOT EXISTS {MOCK_PROMPT} (
        id INTEGER NOT NULL PRIMARY KEY,
        round_id INTEGER NOT NULL REFERENCES {MOCK_ROUND} (id),
        phase_index INTEGER NOT NULL,
        position INTEGER NOT NULL,
        prompt_key VARCHAR NOT NULL,
        card_id VARCHAR,
        deck_id VARCHAR,
        text VARCHAR NOT NULL,
        rubric_json VARCHAR NOT NULL,
        answer VARCHAR NOT NULL,
        answer_saved_at DATETIME
    )""",
    f"CREATE INDEX IF NOT EXISTS ix_{MOCK_PROMPT}_round_id ON {MOCK_PROMPT} (round_id)",
    f"CREATE INDEX IF NOT EXISTS ix_{MOCK_PROMPT}_card_id ON {MOCK_PROMPT} (card_id)",
    f"""CREATE TABLE IF NOT EXISTS {MOCK_GRADE} (
        id INTEGER NOT NULL PRIMARY KEY,
        prompt_id INTEGER NOT NULL REFERENCES {MOCK_PROMPT} (id),
        bullet_index INTEGER NOT NULL,
        bullet VARCHAR NOT NULL,
        auto_status VARCHAR NOT NULL,
        checked BOOLEAN NOT NULL
    )""",
    f"CREATE INDEX IF NOT EXISTS ix_{MOCK_GRADE}_prompt_id ON {MOCK_GRADE} (prompt_id)",
    f"""CREATE TABLE IF NOT EXISTS {MOCK_REPORT} (
        round_id INTEGER NOT NULL PRIMARY KEY REFERENCES {MOCK_ROUND} (id),
        created_at DATETIME NOT NULL,
        overall_band VARCHAR NOT NULL,
        overall_score FLOAT NOT NULL,
        report_json VARCHAR NOT NULL
    )""",
    f"""CREATE TABLE IF NOT EXISTS {LAB_RUN} (
        id INTEGER NOT NULL PRIMARY KEY,
        lab VARCHAR NOT NULL,
        params_json VARCHAR NOT NULL,
        world_size INTEGER NOT NULL,
        card_id VARCHAR,
        deck_id VARCHAR,
        started_at DATETIME NOT NULL,
        duration_s FLOAT,
        status VARCHAR NOT NULL,
        summary_json VARCHAR NOT NULL,
        run_dir VARCHAR NOT NULL,
        predicted VARCHAR,
        certainty VARCHAR,
        prediction_right BOOLEAN,
        suggested_rating INTEGER,
        rating INTEGER
    )""",
    f"CREATE INDEX IF NOT EXISTS ix_{LAB_RUN}_lab ON {LAB_RUN} (lab)",
    f"CREATE INDEX IF NOT EXISTS ix_{LAB_RUN}_card_id ON {LAB_RUN} (card_id)",
    f"CREATE INDEX IF NOT EXISTS ix_{LAB_RUN}_started_at ON {LAB_RUN} (started_at)",
]

# v4: leeches. A card that lapsed `leech_threshold` times is flagged (and, by default, suspended
# by the scheduler in the same transaction as the rating); the browser finds them by this flag.
V4 = [
    f"ALTER TABLE {CARD_STATE} ADD COLUMN leech BOOLEAN NOT NULL DEFAULT 0",
]

# v5: exercises (drill.exercises): one progress row per started exercise, one attempt row per check.
V5 = [
    f"""CREATE TABLE {EXERCISE_PROGRESS} (
        name VARCHAR NOT NULL PRIMARY KEY,
        started_at DATETIME NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        hints_shown INTEGER NOT NULL DEFAULT 0,
        solution_viewed BOOLEAN NOT NULL DEFAULT 0,
        last_status VARCHAR,
        last_checked_at DATETIME,
        solved_at DATETIME,
        rated INTEGER
    )""",
    f"""CREATE TABLE {EXERCISE_ATTEMPT} (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        name VARCHAR NOT NULL,
        checked_at DATETIME NOT NULL,
        status VARCHAR NOT NULL,
        passed INTEGER NOT NULL,
        total INTEGER NOT NULL,
        duration_s FLOAT NOT NULL,
        failed_json VARCHAR NOT NULL,
        run_dir VARCHAR NOT NULL
    )""",
    f"CREATE INDEX ix_{EXERCISE_ATTEMPT}_name ON {EXERCISE_ATTEMPT} (name)",
]

# v6: one run log. Lab runs (the TUI's, `drill lab run`'s, coding-round gradings recorded as
# lab "mock-coding") and exercise checks move into run_log with a kind; verify records its jobs
# there too (its cache is a lookup by name, params, world size and lab source version). A lab
# row's pid and check counts come out of its summary JSON when that JSON is valid. An exercise
# attempt was written when its check ended: it starts and finishes at `checked_at`.
_JSON = "CASE WHEN json_valid(summary_json) THEN json_extract(summary_json, '$.{key}') END"
V6 = [
    f"""CREATE TABLE {RUN_LOG} (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        kind VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        params_json VARCHAR NOT NULL,
        world_size INTEGER NOT NULL,
        card_id VARCHAR,
        deck_id VARCHAR,
        started_at DATETIME NOT NULL,
        finished_at DATETIME,
        duration_s FLOAT,
        status VARCHAR NOT NULL,
        checks_passed INTEGER,
        checks_total INTEGER,
        summary_json VARCHAR NOT NULL,
        run_dir VARCHAR NOT NULL,
        version VARCHAR,
        pid INTEGER,
        predicted VARCHAR,
        certainty VARCHAR,
        prediction_right BOOLEAN,
        suggested_rating INTEGER,
        rating INTEGER
    )""",
    f"CREATE INDEX ix_{RUN_LOG}_kind ON {RUN_LOG} (kind)",
    f"CREATE INDEX ix_{RUN_LOG}_name ON {RUN_LOG} (name)",
    f"CREATE INDEX ix_{RUN_LOG}_card_id ON {RUN_LOG} (card_id)",
    f"CREATE INDEX ix_{RUN_LOG}_started_at ON {RUN_LOG} (started_at)",
    f"""INSERT INTO {RUN_LOG} (id, kind, name, params_json, world_size, card_id, deck_id,
        started_at, duration_s, status, checks_passed, checks_total, summary_json, run_dir, pid,
        predicted, certainty, prediction_right, suggested_rating, rating)
    SELECT id, CASE WHEN lab = 'mock-coding' THEN 'coding' ELSE 'lab' END, lab, params_json,
        world_size, card_id, deck_id, started_at, duration_s, status,
        {_JSON.format(key="checks_passed")}, {_JSON.format(key="checks_total")}, summary_json,
        run_dir, {_JSON.format(key="pid")}, predicted, certainty, prediction_right,
        suggested_rating, rating
    FROM {LAB_RUN} ORDER BY id""",
    f"""INSERT INTO {RUN_LOG} (kind, name, params_json, world_size, started_at, finished_at,
        duration_s, status, checks_passed, checks_total, summary_json, run_dir)
    SELECT 'exercise', name, '{{}}', 0, checked_at, checked_at, duration_s, status, passed, total,
        json_object('status', status, 'checks_passed', passed, 'checks_total', total,
                    'failed_checks', CASE WHEN json_valid(failed_json) THEN json(failed_json)
                                     ELSE json_array() END),
        run_dir
    FROM {EXERCISE_ATTEMPT} ORDER BY id""",
    f"DROP TABLE {LAB_RUN}",
    f"DROP TABLE {EXERCISE_ATTEMPT}",
]

# v7: the interview plan (`drill plan`). Append-only: every change of the profile is a new row,
# the newest row is in force, and a row with ended = 1 means "no plan" (drill plan --clear).
V7 = [
    f"""CREATE TABLE {INTERVIEW_PLAN} (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        interview_day VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        minutes_per_day INTEGER NOT NULL,
        target_recall FLOAT NOT NULL,
        created_at DATETIME NOT NULL,
        ended BOOLEAN NOT NULL DEFAULT 0
    )""",
]

# v8 (issue 40): the answer-time queries (storage.snapshot.NEWEST_TIMED at every first paint,
# ReviewRepository.answer_seconds) read only timed reviews; a partial index holds just those,
# so the newest 500 are found without a scan of the review log, however few rows are timed.
# Its WHERE is storage.snapshot.TIMED word for word: SQLite uses a partial index only when the
# query's WHERE contains the index's terms (tests/storage/test_query_plans.py holds them equal).
REVIEW_LOG_TIMED = "typeof(duration_ms) = 'integer' AND duration_ms > 0"
V8 = [
    f"CREATE INDEX IF NOT EXISTS ix_{REVIEW_LOG}_timed ON {REVIEW_LOG} (card_id, duration_ms) "
    f"WHERE {REVIEW_LOG_TIMED}",
    f"CREATE INDEX IF NOT EXISTS ix_{REVIEW_LOG}_timed_newest ON {REVIEW_LOG} (id, duration_ms) "
    f"WHERE {REVIEW_LOG_TIMED}",
]

MIGRATIONS: list[list[str]] = [V1, V2, V3, V4, V5, V6, V7, V8]
LATEST_VERSION = len(MIGRATIONS)


class SchemaTooNewError(DatabaseError):
    def __init__(self, found: int) -> None:
        super().__init__(
            f"the database has schema version {found}, newer than this drill supports "
            f"({LATEST_VERSION}); upgrade drill"
        )
        self.found = found


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, target: int = LATEST_VERSION) -> int:
    """Apply the missing steps up to `target`; return the version found before migrating.

    `conn` must be in autocommit mode (isolation_level=None): each step runs in an explicit
    BEGIN IMMEDIATE ... COMMIT, re-reading the version under the write lock.
    """
    found = schema_version(conn)
    if found > LATEST_VERSION:
        raise SchemaTooNewError(found)
    if found < 0:  # MIGRATIONS[-1] would run the last step on a database that has none
        raise DatabaseError(
            f"the database has schema version {found}, not one drill writes (see: drill db check)"
        )
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(conn)
            if version >= target:
                conn.execute("COMMIT")
                return found
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            # A failed COMMIT (e.g. a full disk) may have ended the transaction already: then
            # a ROLLBACK would fail too and hide the cause behind "no transaction is active".
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise


def _switch_to_wal(conn: sqlite3.Connection, pause: Callable[[float], None] | None = None) -> None:
    """PRAGMA journal_mode = WAL, tried again while another process holds the file: two drills
    opening a new database at once raced here, and SQLite can answer "database is locked" at
    once rather than through the busy handler. Bounded by the same busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    wait = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            busy = "locked" in str(error) or "busy" in str(error)
            if not busy or time.monotonic() + wait > deadline:
                raise
        (pause or time.sleep)(wait)
        wait = min(wait * 2, 0.1)


def migrate_file(path: Path) -> int:
    """The one migration entry: create the file (and its folder) or bring it to LATEST_VERSION,
    in WAL mode; returns the version found. A file from a newer drill is refused before a byte of
    it changes. Stdlib only. Raises DatabaseError with one line naming `path`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DatabaseError(f"cannot create {path.parent}: {error.strerror or error}") from None
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as error:
        raise DatabaseError(f"cannot open database {path}: {one_line(error)}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        found = schema_version(conn)
        if found > LATEST_VERSION:
            raise SchemaTooNewError(found)
        if found < 0:
            raise DatabaseError(
                f"{path} has schema version {found}, not one drill writes (see: drill db check)"
            )
        _switch_to_wal(conn)
        return migrate(conn)
    except SchemaTooNewError as error:
        raise DatabaseError(f"{path}: {error}") from None
    except sqlite3.Error as error:
        if is_write_failure(error, path):
            raise DatabaseError(
                f"cannot write the database {path}: {one_line(error)}{space_note(path)}"
            ) from None
        raise DatabaseError(
            f"cannot open database {path}: {one_line(error)} (see: drill db check)"
        ) from None
    finally:
        conn.close()

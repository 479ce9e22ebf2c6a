"""Schema migrations for the core tables, tracked in PRAGMA user_version.

Each step moves the database from version N-1 to N and is applied in its own IMMEDIATE
transaction, so two copies of drill opening an old database at once migrate it exactly once.
Never edit a released step; append a new one. Tables of other modules (mock rounds, lab runs)
are created by SQLModel's create_all after these steps; changes to them also go here.
"""

from __future__ import annotations

import sqlite3

from storage.schema_names import CARD_STATE, REVIEW_LOG

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

MIGRATIONS: list[list[str]] = [V1, V2]
LATEST_VERSION = len(MIGRATIONS)


class SchemaTooNewError(RuntimeError):
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
            conn.execute("ROLLBACK")
            raise

"""The database that holds verify's cache (its run log) for tests that build a ResultCache."""

from __future__ import annotations

from pathlib import Path

from storage.db import Database, open_database


def cache_db(folder: Path) -> Database:
    """A database in `folder` (made if missing); the same folder gives the same run log."""
    return open_database(folder / "run-log.sqlite3")

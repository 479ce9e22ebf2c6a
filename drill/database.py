"""The app's database, opened for the UI layers (which never import `storage` themselves).

Importing this module imports sqlmodel (~0.5 s): keep it off the first-paint path.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from drill.paths import database_path
from storage.db import Database, open_database

__all__ = ["Database", "daily_backup", "open_app_database"]


def open_app_database(path: Path | None = None) -> Database:
    """Create or migrate the database (drill.paths.database_path() unless `path` is given);
    storage.db.DatabaseError with a one-line message when the file cannot be used."""
    return open_database(path or database_path())


def daily_backup(path: Path | None = None) -> str | None:
    """Take today's automatic backup (at most one a day; the newest 7 are kept in
    DRILL_HOME/backups). Returns a line for a notice when it could not be taken."""
    from storage.backup import auto_backup
    from storage.errors import DatabaseError

    try:
        auto_backup(path or database_path(), datetime.now(UTC))
    except (DatabaseError, OSError) as error:
        return f"No automatic backup today: {error}"
    return None

"""Damage a drill database the way a bad disk or a stray write would, for error-path tests."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


def corrupt_middle(db_path: Path) -> None:
    """Checkpoint the WAL into the file, then overwrite every page but the first (the header
    and schema root) and the last with random bytes."""
    conn = sqlite3.connect(db_path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()
    size = db_path.stat().st_size
    assert size >= 3 * page, f"{db_path} is too small to damage in the middle"
    with open(db_path, "r+b") as handle:
        handle.seek(page)
        handle.write(os.urandom(size - 2 * page))

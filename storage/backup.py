"""Backups of the database with SQLite's online backup API (consistent even while another copy
of drill writes), automatic daily backups, and restore. Stdlib only.

Automatic backups (like Anki's): at most one per local calendar day, taken on start, the newest
KEEP kept, in DRILL_HOME/backups/ as drill-YYYYmmdd-HHMMSS.sqlite3. Manual backups
(`-manual`) and the copy kept before a restore (`-before-restore`) are never pruned.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from datetime import datetime
from pathlib import Path

from storage.errors import DatabaseError, is_write_failure, one_line, os_reason, space_note
from storage.integrity import connect_readonly, validate_database
from storage.migrations import migrate_file

KEEP = 7
BACKUP_DIR_NAME = "backups"
_AUTO_NAME = re.compile(r"^drill-(\d{8})-\d{6}(?:-\d+)?\.sqlite3$")
_BUSY_TIMEOUT_S = 10.0


def backups_dir(db_path: Path) -> Path:
    return db_path.parent / BACKUP_DIR_NAME


def automatic_backups(db_path: Path) -> list[Path]:
    """The automatic backups of `db_path`, oldest first."""
    folder = backups_dir(db_path)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _AUTO_NAME.match(p.name) and p.is_file())


def _stamp(now: datetime) -> str:
    return now.astimezone().strftime("%Y%m%d-%H%M%S")


def _unused(folder: Path, stem: str) -> Path:
    path, n = folder / f"{stem}.sqlite3", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.sqlite3"
    return path


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def copy_database(source: Path, dest: Path) -> None:
    """Write a consistent single-file copy of the database `source` to `dest`, atomically: a
    temporary file next to `dest`, renamed into place once complete."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        src = connect_readonly(source, _BUSY_TIMEOUT_S)
        try:
            out = sqlite3.connect(tmp, isolation_level=None)
            try:
                src.backup(out)
                out.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
            finally:
                out.close()
        finally:
            src.close()
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
        _fsync_dir(dest.parent)
    except sqlite3.Error as error:
        if is_write_failure(error, dest):
            raise DatabaseError(
                f"cannot write {dest}: {one_line(error)}{space_note(dest)}"
            ) from None
        raise DatabaseError(
            f"cannot copy the database {source}: {one_line(error)}{space_note(source)}"
        ) from None
    except OSError as error:
        raise DatabaseError(f"cannot write {dest}: {os_reason(error)}{space_note(dest)}") from None
    finally:  # also on KeyboardInterrupt (drill's CLI raises one for SIGTERM and SIGHUP too)
        remove_with_journals(tmp)


def remove_with_journals(path: Path) -> None:
    """Delete a temporary database and whatever journal SQLite kept beside it."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def backup_database(db_path: Path, out: Path | None, now: datetime) -> Path:
    """A manual backup: to `out` (a new file, or into a directory), else into backups/.
    Returns the file written; never overwrites one. A database that fails SQLite's
    integrity_check is not copied (the copy would look like a sound backup): DatabaseError."""
    if not db_path.is_file():
        raise DatabaseError(f"no database at {db_path}")
    stem = f"drill-{_stamp(now)}-manual"
    if out is None:
        dest = _unused(backups_dir(db_path), stem)
    elif out.is_dir():
        dest = _unused(out, stem)
    elif out.exists() or out.is_symlink():
        raise DatabaseError(f"{out} already exists; not overwriting it")
    elif not out.parent.is_dir():  # a path given is written where it says, never a new folder
        raise DatabaseError(f"cannot write {out}: no directory {out.parent}")
    else:
        dest = out
    try:  # where it goes first: a read-only or missing place fails before any reading
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DatabaseError(
            f"cannot write {dest}: {os_reason(error)}{space_note(dest.parent)}"
        ) from None
    _integrity_check(db_path)
    copy_database(db_path, dest)
    return dest


def auto_backup(db_path: Path, now: datetime, keep: int = KEEP) -> Path | None:
    """Back the database up unless an automatic backup was already taken on `now`'s local
    date (or there is no database yet); then delete all but the newest `keep`. Returns the new
    backup, or None when none was due. A damaged database is not backed up (it would push the
    good backups out): DatabaseError instead."""
    if not db_path.is_file():
        return None
    today = now.astimezone().strftime("%Y%m%d")
    existing = automatic_backups(db_path)
    if any(_AUTO_NAME.match(p.name).group(1) == today for p in existing):  # type: ignore[union-attr]
        return None
    _quick_check(db_path)
    dest = _unused(backups_dir(db_path), f"drill-{_stamp(now)}")
    copy_database(db_path, dest)
    for old in automatic_backups(db_path)[: -keep or None] if keep > 0 else []:
        old.unlink(missing_ok=True)
    return dest


def _quick_check(db_path: Path) -> None:
    try:
        conn = connect_readonly(db_path, _BUSY_TIMEOUT_S)
        try:
            result = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as error:
        result = one_line(error)
    if result != "ok":
        raise DatabaseError(
            f"the database {db_path} is damaged ({one_line(result)}); no automatic backup "
            "taken (see: drill db check, drill db restore)"
        )


def _integrity_check(db_path: Path) -> None:
    try:
        conn = connect_readonly(db_path, _BUSY_TIMEOUT_S)
        try:
            rows = conn.execute("PRAGMA integrity_check(3)").fetchall()
        finally:
            conn.close()
        problems = [str(row[0]) for row in rows if row[0] != "ok"]
    except sqlite3.Error as error:
        name = getattr(error, "sqlite_errorname", "") or ""
        if not name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            raise DatabaseError(
                f"cannot read the database {db_path}: {one_line(error)}{space_note(db_path)}"
            ) from None
        problems = [one_line(error)]  # too damaged for the check to finish
    if problems:
        raise DatabaseError(
            f"the database {db_path} is damaged ({one_line('; '.join(problems))}); no backup "
            "written (see: drill db check, drill db restore)"
        )


def restore_database(db_path: Path, source: Path, now: datetime) -> Path | None:
    """Replace the database at `db_path` with the drill database `source`, after validating it
    (SQLite integrity, a known schema version, the tables of that version) and keeping a copy of
    the current one in backups/. The restored database is migrated to the latest schema.
    Returns the copy kept (None when there was no database)."""
    validate_database(source)
    if db_path.exists() and source.resolve() == db_path.resolve():
        raise DatabaseError(f"{source} is the current database")
    saved = _save_current(db_path, now) if db_path.exists() else None
    if _header_readable(db_path):
        _copy_into_live(source, db_path)
    else:
        _replace_file(source, db_path)
    try:
        migrate_file(db_path)
    except DatabaseError as error:
        raise DatabaseError(f"restored {db_path} but cannot migrate it: {error}") from None
    return saved


def _save_current(db_path: Path, now: datetime) -> Path:
    folder = backups_dir(db_path)
    try:
        dest = _unused(folder, f"drill-{_stamp(now)}-before-restore")
        copy_database(db_path, dest)
        return dest
    except DatabaseError:  # too damaged for the backup API: keep its bytes as they are
        dest = _unused(folder, f"drill-{_stamp(now)}-before-restore-raw")
        try:
            shutil.copyfile(db_path, dest)
            wal = db_path.with_name(db_path.name + "-wal")
            if wal.exists():
                shutil.copyfile(wal, dest.with_name(dest.name + "-wal"))
        except OSError as error:
            raise DatabaseError(
                f"cannot keep a copy of {db_path} before restoring: {one_line(error)}"
            ) from None
        return dest


def _header_readable(db_path: Path) -> bool:
    if not db_path.is_file():
        return False
    try:
        conn = connect_readonly(db_path, _BUSY_TIMEOUT_S)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return True


def _copy_into_live(source: Path, db_path: Path) -> None:
    """The backup API into the live database: one write transaction, so another running copy
    of drill sees the old or the new database, never a mix, and a crash leaves the old one."""
    converted: Path | None = None
    try:
        live = sqlite3.connect(db_path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            live.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            page_size = int(live.execute("PRAGMA page_size").fetchone()[0])
            converted = _with_page_size(source, page_size, db_path)
            src = connect_readonly(converted or source, _BUSY_TIMEOUT_S)
            try:
                src.backup(live)
            finally:
                src.close()
        finally:
            live.close()
    except sqlite3.Error as error:
        raise DatabaseError(f"cannot restore into {db_path}: {one_line(error)}") from None
    finally:
        if converted is not None:
            remove_with_journals(converted)


def _with_page_size(source: Path, page_size: int, db_path: Path) -> Path | None:
    """A temporary copy of `source` with `page_size` when its own differs (SQLite cannot back
    up into a WAL database of another page size); None when no copy is needed."""
    src = connect_readonly(source, _BUSY_TIMEOUT_S)
    try:
        if int(src.execute("PRAGMA page_size").fetchone()[0]) == page_size:
            return None
    finally:
        src.close()
    tmp = db_path.with_name(f".{db_path.name}.{os.getpid()}.pagesize")
    try:
        copy_database(source, tmp)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute(f"PRAGMA page_size = {page_size}")
            conn.execute("VACUUM")
        finally:
            conn.close()
    except BaseException:
        remove_with_journals(tmp)
        raise
    return tmp


def _replace_file(source: Path, db_path: Path) -> None:
    """No usable database at `db_path` (missing, or not even an SQLite header): put a copy of
    `source` in its place with a rename, dropping the old file's WAL so it is never replayed."""
    tmp = db_path.with_name(f".{db_path.name}.restore")
    copy_database(source, tmp)
    try:
        for suffix in ("-wal", "-shm"):
            db_path.with_name(db_path.name + suffix).unlink(missing_ok=True)
        os.replace(tmp, db_path)
        _fsync_dir(db_path.parent)
    except OSError as error:
        raise DatabaseError(f"cannot replace {db_path}: {one_line(error)}") from None
    finally:
        remove_with_journals(tmp)

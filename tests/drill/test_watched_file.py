"""drill.watched_file, the one mechanism behind the exercise and coding round editors (issue
32, items 2 and 7), and drill.files.decode_text."""

from __future__ import annotations

import os
from pathlib import Path

from drill.files import decode_text
from drill.watched_file import WatchedFile


def test_bytes_that_are_not_utf8_decode_with_a_notice_and_printable() -> None:
    assert decode_text("ok é".encode(), "a.py").notice is None
    latin = decode_text("caf\xe9\r\n".encode("latin-1"), "a.py")
    assert latin.text == "café\n" and "shown as Latin-1" in (latin.notice or "")
    windows = decode_text(b"\x93quoted\x94 \x1b[2J", "a.py")  # cp1252 quotes, an escape
    assert windows.text == "\u201cquoted\u201d \ufffd[2J" and "cp1252" in (windows.notice or "")


def test_a_save_writes_through_a_symlink_keeps_the_mode_and_only_when_edited(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real.py"
    real.write_bytes(b"caf\xe9\n")
    real.chmod(0o640)
    link = tmp_path / "link.py"
    link.symlink_to(real.name)
    watched = WatchedFile(link, 1024)
    text = watched.load()
    assert text == "café\n"
    assert watched.save(text) is None and real.read_bytes() == b"caf\xe9\n"  # not edited
    assert watched.save("x = 1\n") is None
    assert link.is_symlink() and real.read_text() == "x = 1\n"
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "real.py"]  # no temp file


def test_a_new_conflict_is_never_forced_over(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("one\n")
    watched = WatchedFile(path, 1024)
    watched.load()
    path.write_text("from elsewhere\n")
    change = watched.save("typed\n", force=True)  # news first: the user has not chosen yet
    assert change is not None and change.kind == "conflict"
    assert path.read_text() == "from elsewhere\n"
    assert watched.save("typed\n") is None and path.read_text() == "from elsewhere\n"
    assert watched.save("typed\n", force=True) is None  # now told: the user's choice
    assert path.read_text() == "typed\n"


def test_nothing_is_written_over_a_fifo(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("one\n")
    watched = WatchedFile(path, 1024)
    watched.load()
    path.unlink()
    os.mkfifo(path)
    change = watched.save("typed\n")
    assert change is not None and change.kind == "refused"
    change = watched.save("typed\n", force=True)
    assert change is not None and "not a regular file" in change.reason
    assert not path.is_file()

"""drill.files.read_regular: only a regular file within its bound is read (no process started)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from drill.decks import cache
from drill.files import FileRefused, read_regular


def finishes(action, timeout_s: float = 10.0):  # type: ignore[no-untyped-def]
    """action()'s value, failing the test (instead of hanging it) if it blocks."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = action()
        except BaseException as error:  # handed to the test's thread
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), "blocked"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]


def test_a_regular_file_within_the_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    with pytest.raises(FileRefused, match="larger than 99 bytes"):
        read_regular(path, 99)


@pytest.mark.parametrize("kind", ["fifo", "dir", "zero", "null"])
def test_anything_but_a_regular_file_is_refused_without_blocking(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "f"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    else:
        path.symlink_to(f"/dev/{kind}")  # a symlink is followed, then judged by what it names
    with pytest.raises(FileRefused):
        finishes(lambda: read_regular(path, 1024))


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "none", 10)


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_the_deck_cache_as_a_fifo_or_a_device_is_an_empty_cache(tmp_path, monkeypatch, kind):
    path = tmp_path / "decks.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    monkeypatch.setattr(cache, "cache_path", lambda: path)
    assert finishes(cache.read_cache) == {}

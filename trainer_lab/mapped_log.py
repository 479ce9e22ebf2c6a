"""An append-only file written through a shared memory map (torch-free).

Why a map and not `os.write`: a store into a MAP_SHARED file mapping lands in the kernel's page
cache at once, so it survives a SIGKILL of the writer exactly like a returned `write()`, and
other processes' `read()` see it at once (Linux keeps the page cache coherent) — but it costs a
memcpy instead of a system call. On the reference trainer's ~0.6 ms lab step the write syscall
and its cache pollution were a fifth of the instrumentation overhead.

The file is grown ahead in CHUNK steps (ftruncate + mremap), so its tail holds NUL bytes until
`close()` truncates it to the content. A writer killed before that leaves the NUL tail:
`content_end` finds where the content ends (readers strip the tail; `trim` removes it once no
writer is alive), and a new writer starts after the content, on a fresh line if the killed one
left half a line.

One writer process per file at a time (the labs give each rank its own file; a restarted rank
continues after its dead predecessor). Writers in one process share one map (`open_log`).
A forked child never writes or truncates its parent's file.
"""

from __future__ import annotations

import mmap
import os
import stat
import threading
import weakref
from pathlib import Path

CHUNK = 1 << 18  # 256 KiB: one grow per ~650 step lines
_READ_BACK = 1 << 16

_lock = threading.Lock()
_open: dict[Path, MappedLog] = {}
_live: weakref.WeakSet[MappedLog] = weakref.WeakSet()  # every map of this process, for a fork


def content_end(fd: int, size: int, floor: int = 0) -> int:
    """Offset just past the last non-NUL byte of the first `size` bytes of `fd` (looked for
    down to `floor`; `floor` when there is none above it)."""
    pos = size
    while pos > floor:
        start = max(floor, pos - _READ_BACK)
        kept = os.pread(fd, pos - start, start).rstrip(b"\0")
        if kept:
            return start + len(kept)
        pos = start
    return floor


def trim(path: Path) -> None:
    """Cut the NUL tail a killed writer left (call only when no writer of `path` is alive).
    Only a regular file at path itself: a FIFO, a device or a symlink planted there (the run
    folder is user code's too) is left alone, never waited on or written through."""
    flags = os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        size = info.st_size
        if not stat.S_ISREG(info.st_mode):
            return
        if size and os.pread(fd, 1, size - 1) == b"\0":
            # A writer's tail is under CHUNK: a file of more NULs (a huge sparse one planted in
            # the run folder) is not a killed writer's, and is not scanned to its start.
            floor = max(size - 4 * CHUNK, 0)
            end = content_end(fd, size, floor)
            if end > floor or floor == 0:
                os.ftruncate(fd, end)
    finally:
        os.close(fd)


class MappedLog:
    """Appends bytes to `path`; see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pid = os.getpid()
        self._foreign = False  # set in a forked child (os.getpid() is a syscall: not per line)
        self._users = 0
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        size = os.fstat(self._fd).st_size
        self._end = content_end(self._fd, size)
        self._capacity = self._end + CHUNK
        self._reserve(self._capacity)
        self._map: mmap.mmap | None = mmap.mmap(self._fd, self._capacity)
        self._append_lock = threading.Lock()
        _live.add(self)
        if self._end and self._map[self._end - 1] != ord("\n"):
            self.append(b"\n")  # a killed writer's torn last line stays a line of its own

    def append(self, data: bytes) -> None:
        if self._map is None:
            raise ValueError(f"{self.path} is closed")
        if self._foreign:
            raise ValueError(f"{self.path} belongs to process {self._pid}, not this fork")
        with self._append_lock:
            end = self._end + len(data)
            if end > self._capacity:
                self._capacity = end + CHUNK
                self._reserve(self._capacity)
                self._map.resize(self._capacity)  # mremap (the file is that long already)
            self._map[self._end : end] = data
            self._end = end

    def _reserve(self, size: int) -> None:
        """Allocate the file's blocks up to `size`: a full disk is an OSError here, not a
        SIGBUS when a store into the map first touches an unallocated page."""
        os.posix_fallocate(self._fd, 0, size)

    def close(self) -> None:
        """Unmap and truncate the file to its content (not in a forked child)."""
        if self._map is None:
            return
        self._map.close()
        self._map = None
        if not self._foreign:
            os.ftruncate(self._fd, self._end)
        os.close(self._fd)


def open_log(path: Path) -> MappedLog:
    """The process's writer of `path` (shared by every caller until each has released it)."""
    key = path.resolve()
    with _lock:
        log = _open.get(key)
        if log is None or log._foreign:
            log = _open[key] = MappedLog(path)
        log._users += 1
        return log


def release_log(log: MappedLog) -> None:
    with _lock:
        log._users -= 1
        if log._users > 0:
            return
        if _open.get(log.path.resolve()) is log:
            del _open[log.path.resolve()]
        log.close()


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    for log in list(_live):
        log._foreign = True
    _open.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)

"""Which processes a test started and left (the warm launcher's idle server is not one: it lives
as long as the process that started it, as in the app)."""

from __future__ import annotations

import os

from trainer_lab.procs import descendants, is_alive
from trainer_lab.warm import client


def default_server_pid() -> int | None:
    """The pid of this process's warm server while it runs (the client's module-level one)."""
    server = client._default
    return server.proc.pid if server is not None and server.alive else None


def started_by(root: int) -> list[int]:
    """Live descendants of root, leaving out this process's idle warm server (not what runs
    under it) and zombies its server has not reaped yet."""
    server = default_server_pid()
    return [pid for pid in descendants(root) if pid != server and is_alive(pid)]


def left_behind() -> list[int]:
    return started_by(os.getpid())

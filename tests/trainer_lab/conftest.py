from __future__ import annotations

import os
import signal

import pytest

from tests.support.procs import left_behind


@pytest.fixture(autouse=True)
def _no_leftover_children() -> object:
    """Every lab test must leave no process of its own behind (the idle warm server, which
    outlives tests on purpose, is not one; anything still running under it is)."""
    yield
    left = left_behind()
    for pid in left:  # clean up so one failure does not cascade, then fail
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"

from __future__ import annotations

import os
import signal

import pytest

from trainer_lab.procs import descendants


@pytest.fixture(autouse=True)
def _no_leftover_children() -> object:
    """Every lab test must leave no process of its own behind."""
    yield
    left = descendants(os.getpid())
    for pid in left:  # clean up so one failure does not cascade, then fail
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"

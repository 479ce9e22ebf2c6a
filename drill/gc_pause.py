"""Pause Python's cyclic garbage collector while a bulk load builds objects that all live on
(stdlib only: the first-paint path uses it).

A full collection walks every live object; a load that makes hundreds of thousands (a YAML node
tree, the deck cache's entries, one schedule row per card) triggers many of them and spends a
third or more of its time there (issue 40). What such a load builds holds no garbage cycles, so
collecting can wait until it is done. Nested and concurrent pauses (a worker thread's load while
the loop reads) share one count: the collector is on again after the last one, if it was on."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pausers = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    global _pausers, _was_enabled
    with _lock:
        if _pausers == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _lock:
            _pausers -= 1
            if _pausers == 0 and _was_enabled:
                gc.enable()

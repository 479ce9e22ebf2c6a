"""The warm launcher, started ahead of the first lab: a screen showing a card with a lab calls
`prewarm()`, so the server imports torch while the user reads, and `l` then `ctrl+r` starts at
once. `warming()` says whether a run starting now still waits for it (the run's log says so).

The server is trainer_lab.warm.client's default one (torch-free here: it runs in a child); on
machines where labs start cold (a GPU, TRAINER_LAB_LAUNCHER=torchrun) nothing is started.
"""

from __future__ import annotations

import threading

WARMING_NOTE = "starting the warm launcher (imports torch once; later runs start at once) …"

_ready = threading.Event()
_lock = threading.Lock()
_thread: threading.Thread | None = None


def uses_warm_launcher() -> bool:
    from trainer_lab.warm.start import default_mode

    return default_mode() == "warm"


def prewarm() -> None:
    """Start the warm launcher in the background; returns at once (a no-op once started)."""
    global _thread
    if _ready.is_set() or not uses_warm_launcher():
        return
    with _lock:
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(target=_start, name="warm-launcher-prewarm", daemon=True)
        _thread.start()


def _start() -> None:
    from trainer_lab.warm.client import WarmServerError, default_server

    server = default_server()
    if server is None:  # it cannot run here: labs start cold
        return
    try:
        server.wait_ready()
    except WarmServerError:
        return
    _ready.set()


def warming() -> bool:
    """Whether a lab started now waits for the warm launcher to import torch."""
    return uses_warm_launcher() and not _ready.is_set()

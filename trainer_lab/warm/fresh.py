"""What a freshly started interpreter has, given back to a process forked from the warm server.

A fork inherits everything of its parent; code run in it must see what `python -m MODULE` would
give it. `capture()` runs first thing in the server, before anything installs a handler or
touches a generator; `run_as_main()` restores that and runs the module:
- signal dispositions (SIGINT raises KeyboardInterrupt, SIGPIPE and SIGXFSZ ignored, the rest
  default) and an empty signal mask;
- random state: Python's `random`, NumPy's global generator and torch's default generator are
  reseeded from the OS, as at interpreter start (torch seeds itself non-deterministically);
- torch's intra-op thread count from OMP_NUM_THREADS (the OpenMP runtime read it once, when the
  server imported torch), and the c10d debug level from TORCH_DISTRIBUTED_DEBUG;
- multiprocessing sees a main process (no parent, no children), so a DataLoader may start
  workers; logging's root handlers, warning filters, faulthandler and
  `sys.dont_write_bytecode` are as at start; sys.path[0] is the working directory, as for `-m`.
  The atexit handlers the preloaded modules registered stay (a fresh process registers them when
  it imports those modules) and run when the module returns, as at interpreter exit.

What a forked process cannot reset: the string-hash seed (PYTHONHASHSEED) is the server's, so
every rank of one launch iterates a set of strings in the same order; the coding round runs one
phase under real torchrun for that reason. File descriptors the agent holds (its rendezvous
store's socket, the ranks' pipes) stay open in the ranks.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import itertools
import logging
import multiprocessing.process as mp_process
import os
import random
import runpy
import signal
import sys
import traceback
import warnings
from typing import Any

_UNCATCHABLE = {signal.SIGKILL, signal.SIGSTOP}


class _Baseline:
    def __init__(self) -> None:
        self.signals: dict[signal.Signals, Any] = {}
        self.root_handlers: list[logging.Handler] = []
        self.root_level = logging.WARNING
        self.warning_filters: list[Any] = []
        self.captured = False
        self.main_process_class: type | None = None  # multiprocessing's (it deletes the name)


_BASELINE = _Baseline()


def capture() -> None:
    """Record the fresh interpreter's state (call before anything changes it)."""
    for sig in signal.valid_signals():
        if sig in _UNCATCHABLE:
            continue
        with contextlib.suppress(OSError, ValueError):
            _BASELINE.signals[signal.Signals(sig)] = signal.getsignal(sig)
    if mp_process.parent_process() is None:
        _BASELINE.main_process_class = type(mp_process.current_process())


def capture_imports() -> None:
    """Record what importing the preloaded modules set up (warning filters torch adds, logging):
    a fresh process that imports them has it too. Call once the preload is done."""
    _BASELINE.root_handlers = list(logging.root.handlers)
    _BASELINE.root_level = logging.root.level
    _BASELINE.warning_filters = list(warnings.filters)
    _BASELINE.captured = True


def restore() -> None:
    """Give this (forked) process the captured fresh state; os.environ must already be set."""
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    for sig, handler in _BASELINE.signals.items():
        if handler is None:  # installed outside Python: leave it
            continue
        with contextlib.suppress(OSError, ValueError, TypeError):
            signal.signal(sig, handler)
    random.seed()
    _reset_multiprocessing()
    if _BASELINE.captured:
        logging.root.handlers[:] = _BASELINE.root_handlers
        logging.root.setLevel(_BASELINE.root_level)
        warnings.filters[:] = _BASELINE.warning_filters
        warnings._filters_mutated()  # type: ignore[attr-defined]
    if faulthandler.is_enabled() and not os.environ.get("PYTHONFAULTHANDLER"):
        faulthandler.disable()
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        _restore_torch(sys.modules["torch"])


def _restore_torch(torch: Any) -> None:
    torch.seed()
    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))
    distributed = sys.modules.get("torch.distributed")
    if distributed is not None and hasattr(distributed, "set_debug_level_from_env"):
        with contextlib.suppress(ValueError, RuntimeError):
            distributed.set_debug_level_from_env()


def _reset_multiprocessing() -> None:
    main_class = _BASELINE.main_process_class
    if main_class is None:
        return
    with contextlib.suppress(AttributeError, TypeError):
        mp_process._current_process = main_class()  # type: ignore[attr-defined]
        mp_process._parent_process = None  # type: ignore[attr-defined]
        mp_process._children = set()  # type: ignore[attr-defined]
        mp_process._process_counter = itertools.count(1)  # type: ignore[attr-defined]


def exit_code(error: SystemExit) -> int:
    """The status `python` gives a SystemExit (None 0, an int itself, anything else printed, 1)."""
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    print(code, file=sys.stderr)
    return 1


def run_as_main(module: str, args: list[str]) -> None:
    """Run `module` as `python -m module args` would in this forked process; never returns."""
    restore()
    sys.path[0] = os.getcwd()
    sys.argv = ["-m", *args]
    # `python -m` runs a module that is not imported yet (a preloaded copy stays where it is
    # referenced; later imports get it, as they would get a second copy after `-m`)
    sys.modules.pop(module, None)
    code = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as error:
        code = exit_code(error)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 128 + signal.SIGINT
    except BaseException:  # what the interpreter prints for an uncaught error
        traceback.print_exc()
        code = 1
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)

"""Which optimizer step started the work a thread is doing (stdlib only), so that a checkpoint
written in the background is attributed to the step that began the save.

An asynchronous save (torch.distributed.checkpoint.async_save, a thread of the user's own)
writes its files while the next steps run: by the step count at the write, the save after step
4 would look like writes after step 5. Every thread started and every task handed to a
concurrent.futures.ThreadPoolExecutor (async_save's executor) carries the step count of the
thread that started it (a pool task's also holds for the future's done-callbacks, which run
after it in its thread); `origin(now)` is that count inside such work (nested work keeps the
outermost start), `now` elsewhere. A synchronous save's origin is its step.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_ATTRIBUTE = "_drill_origin_step"
_task = threading.local()  # the origin of the pool task this thread runs now
_installed: list[Callable[[], int]] = []


def origin(now: int) -> int:
    """The optimizer step count when the work of this thread began (`now` in the main thread
    and in threads started before install)."""
    task = getattr(_task, "origin", None)
    if isinstance(task, int):
        return task
    started = getattr(threading.current_thread(), _ATTRIBUTE, None)
    return started if isinstance(started, int) else now


def install(steps_done: Callable[[], int]) -> Callable[[], None]:
    """Stamp every thread started and every pool task submitted from now on with the origin of
    the code that starts it (`steps_done()`: the optimizer steps done so far). Once per
    process; returns what undoes it (a no-op when it was installed already)."""
    if _installed:
        return lambda: None
    _installed.append(steps_done)
    start = threading.Thread.start
    submit = ThreadPoolExecutor.submit

    def stamped_start(self: threading.Thread, *args: Any, **kwargs: Any) -> None:
        setattr(self, _ATTRIBUTE, origin(steps_done()))
        start(self, *args, **kwargs)

    def stamped_submit(self: ThreadPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        began = origin(steps_done())

        def run(*inner: Any, **named: Any) -> Any:
            # kept after fn returns: the future's done-callbacks run next, in this thread
            _task.origin = began
            return fn(*inner, **named)

        return submit(self, run, *args, **kwargs)

    threading.Thread.start = stamped_start  # type: ignore[method-assign]
    ThreadPoolExecutor.submit = stamped_submit  # type: ignore[method-assign]

    def undo() -> None:
        threading.Thread.start = start  # type: ignore[method-assign]
        ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]
        _installed.clear()

    return undo

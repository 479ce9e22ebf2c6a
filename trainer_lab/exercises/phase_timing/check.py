"""phase-timing: one process, two runs of the user's PhaseTimer over two steps of three phases.

On CPU the phases do real matmuls; the checker times each body itself from inside, so the
timer's total must enclose that and add little, and torch.cuda must not be touched (it is
patched to fail as on a CPU-only build).

On CUDA there is no GPU here, so the device is simulated the way CUDA behaves: torch.cuda is
patched so that work is queued on a stream served by a background thread, each item taking a
known time; torch.cuda.synchronize waits until the queue is empty, and a torch.cuda.Event takes
its timestamp when the stream reaches it (so timing with events works too). Before each step an
"input copy" is queued outside any phase, as a non_blocking host-to-device copy would be.
"""

import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import torch

from trainer_lab.exercises._checker.ctx import Ctx, where

PHASES = {"forward": 0.06, "backward": 0.12, "optimizer": 0.03}  # seconds of device work a step
COPY_S = 0.10  # queued before each step, outside the phases
STEPS = 2
CPU_MATMULS = {"forward": 20, "backward": 40, "optimizer": 10}


class SimulatedStream:
    """A CUDA stream stand-in: launch() returns at once, the work runs behind the host."""

    def __init__(self) -> None:
        self._queue: queue.Queue[float | Callable[[], None]] = queue.Queue()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            item = self._queue.get()
            if callable(item):
                item()  # an event reached by the stream
            else:
                time.sleep(item)  # the kernel's duration on the device
            self._queue.task_done()

    def launch(self, item: float | Callable[[], None]) -> None:
        self._queue.put(item)

    def synchronize(self, device: Any = None) -> None:
        self._queue.join()

    def event_class(self) -> type:
        stream = self

        class SimulatedEvent:
            """torch.cuda.Event: timestamped when the stream gets to it, not when recorded."""

            def __init__(self, enable_timing: bool = False, **_: Any) -> None:
                self.at: float | None = None
                self._reached = threading.Event()

            def _stamp(self) -> None:
                self.at = time.perf_counter()
                self._reached.set()

            def record(self, _stream: Any = None) -> None:
                self._reached.clear()
                stream.launch(self._stamp)

            def query(self) -> bool:
                return self._reached.is_set()

            def synchronize(self) -> None:
                self._reached.wait()

            def elapsed_time(self, end: "SimulatedEvent") -> float:
                if self.at is None or end.at is None:
                    raise RuntimeError("Both events must be completed before calculating time")
                return (end.at - self.at) * 1000.0

        return SimulatedEvent


@contextmanager
def _cuda(available: bool, synchronize: Callable[..., None], event: Any) -> Iterator[None]:
    with (
        mock.patch.object(torch.cuda, "Event", event),
        mock.patch.object(torch.cuda, "is_available", lambda: available),
        mock.patch.object(torch.cuda, "device_count", lambda: int(available)),
        mock.patch.object(torch.cuda, "current_device", lambda: 0),
        mock.patch.object(torch.cuda, "synchronize", synchronize),
    ):
        yield


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _totals(timer: Any) -> dict[str, float]:
    got = timer.totals()
    return {name: float(got.get(name, 0.0)) for name in PHASES}


def _cpu(ctx: Ctx) -> None:
    cuda_calls: list[str] = []

    def no_cuda(device: Any = None) -> None:
        cuda_calls.append(f"torch.cuda.synchronize({device!r})")
        raise AssertionError("Torch not compiled with CUDA enabled")

    def no_event(*args: Any, **kwargs: Any) -> None:
        cuda_calls.append("torch.cuda.Event(...)")
        raise AssertionError("Torch not compiled with CUDA enabled")

    a = torch.randn(192, 192)
    work = dict.fromkeys(PHASES, 0.0)
    try:
        with _cuda(False, no_cuda, no_event):
            timer = ctx.attr("PhaseTimer")(torch.device("cpu"))
            for _ in range(STEPS):
                for name, count in CPU_MATMULS.items():
                    with timer.phase(name):
                        start = time.perf_counter()
                        for _ in range(count):
                            a = torch.tanh(a @ a)
                        work[name] += time.perf_counter() - start
            got = _totals(timer)
    except Exception as error:
        calls = f" (called {cuda_calls[0]} on CPU)" if cuda_calls else ""
        raised = where(error, ctx.user_file)
        detail = f"on CPU the timer raised {raised}{calls}: there is no CUDA to synchronize"
        ctx.check("cpu_times_phases", False, detail)
        return
    off = [
        f"{name} {_ms(got[name])} for {_ms(work[name])} of work"
        for name in PHASES
        if not (0.95 * work[name] <= got[name] <= 1.5 * work[name] + 0.05)
    ]
    if cuda_calls:
        ok, detail = False, f"on CPU the timer called {cuda_calls[0]} (CUDA calls fail without it)"
    elif off:
        ok, detail = False, f"on CPU the totals are off: {', '.join(off)}"
    else:
        ok, detail = (
            True,
            "on CPU: "
            + ", ".join(f"{name} {_ms(got[name])} for {_ms(work[name])}" for name in PHASES),
        )
    ctx.check("cpu_times_phases", ok, detail)


def _simulated_cuda(ctx: Ctx) -> None:
    stream = SimulatedStream()
    expected = {name: seconds * STEPS for name, seconds in PHASES.items()}
    try:
        with _cuda(True, stream.synchronize, stream.event_class()):
            timer = ctx.attr("PhaseTimer")(torch.device("cuda", 0))
            for _ in range(STEPS):
                stream.launch(COPY_S)  # the input copy, queued before the step
                for name, seconds in PHASES.items():
                    with timer.phase(name):
                        stream.launch(seconds)
            stream.synchronize()
            got = _totals(timer)
    except Exception as error:
        detail = f"on CUDA the timer raised {where(error, ctx.user_file)}"
        ctx.check("waits_for_the_device", False, detail)
        ctx.check("excludes_other_work", False, "not measured: " + detail)
        return
    short = [
        f"{name} {_ms(got[name])} for {_ms(expected[name])} of queued work"
        for name in PHASES
        if got[name] < 0.8 * expected[name]
    ]
    ctx.check(
        "waits_for_the_device",
        not short,
        f"on CUDA {', '.join(short)}: the clock was read before the device finished the "
        "phase's kernels"
        if short
        else "on CUDA every phase waits for its kernels: "
        + ", ".join(f"{name} {_ms(got[name])}" for name in PHASES),
    )
    copies = COPY_S * STEPS
    long = [
        f"{name} {_ms(got[name])} for {_ms(expected[name])} of its own work"
        for name in PHASES
        if got[name] > expected[name] + 0.5 * copies
    ]
    ctx.check(
        "excludes_other_work",
        not long,
        f"on CUDA {', '.join(long)}: it includes the {_ms(copies)} input copy queued before the "
        "phase began (synchronize at the start of a phase too)"
        if long
        else "no phase is charged the input copy queued before it",
    )


def run(ctx: Ctx) -> None:
    _cpu(ctx)
    _simulated_cuda(ctx)

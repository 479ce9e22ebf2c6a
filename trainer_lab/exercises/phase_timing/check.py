"""phase-timing: one process, two runs of the user's PhaseTimer over two steps of three phases.

On CPU the phases do real matmuls; the checker times each body itself from inside and each
`with` statement from outside, so a right total lies between the two: no wall-clock threshold
that a loaded machine could break. A pause between phases shows a timer that charges the time
outside its phases. torch.cuda and torch.accelerator must not be touched (they are patched to
fail as on a CPU-only build).

On CUDA there is no GPU here, so the device is simulated the way CUDA behaves: torch.cuda is
patched so that work is queued on a stream served by a background thread, each item taking a
known time; torch.cuda.synchronize, torch.accelerator.synchronize and the current stream's
synchronize wait until the queue is empty, and a torch.cuda.Event (or torch.Event) takes its
timestamp when the stream reaches it (so timing with events works too). Before each step an
"input copy" is queued outside any phase, as a non_blocking host-to-device copy would be.
The stream records when each item finished, so the bounds are measured, not assumed: a phase
must take at least its kernels' time, and at most the time from the end of the work queued
before it to the end of its `with` statement.
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
CPU_GAP_S = 0.03  # a pause before each phase, outside it
TOLERANCE_S = 0.002  # per reading: another clock than perf_counter, float rounding


class SimulatedStream:
    """A CUDA stream stand-in: launch() returns at once, the work runs behind the host."""

    def __init__(self) -> None:
        self._queue: queue.Queue[float | Callable[[], None]] = queue.Queue()
        self.queued = 0  # items launched so far
        self.done: list[float] = []  # perf_counter when each item finished, in launch order
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            item = self._queue.get()
            if callable(item):
                item()  # an event reached by the stream
            else:
                time.sleep(item)  # the kernel's duration on the device
            self.done.append(time.perf_counter())
            self._queue.task_done()

    def launch(self, item: float | Callable[[], None]) -> None:
        self.queued += 1
        self._queue.put(item)

    def synchronize(self, device: Any = None) -> None:
        self._queue.join()

    def record_event(self, event: Any = None) -> Any:
        event = event or self.event_class()(enable_timing=True)
        event.record()
        return event

    def query(self) -> bool:
        return self._queue.unfinished_tasks == 0

    def wait_stream(self, _other: Any) -> None:
        pass  # one stream: already in order

    def wait_event(self, _event: Any) -> None:
        pass

    def event_class(self) -> type:
        stream = self

        class SimulatedEvent:
            """torch.cuda.Event: timestamped when the stream gets to it, not when recorded."""

            def __init__(self, *_args: Any, enable_timing: bool = False, **_: Any) -> None:
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

            def wait(self, _stream: Any = None) -> None:
                pass  # one stream: already in order

            def synchronize(self) -> None:
                self._reached.wait()

            def elapsed_time(self, end: "SimulatedEvent") -> float:
                if self.at is None or end.at is None:
                    raise RuntimeError("Both events must be completed before calculating time")
                return (end.at - self.at) * 1000.0

        return SimulatedEvent


@contextmanager
def _cuda(
    available: bool, synchronize: Callable[..., None], event: Any, stream: Any
) -> Iterator[None]:
    """torch.cuda and torch.accelerator as on a machine with one CUDA device (available), or
    as on a CPU-only build (every call that needs a device goes to `synchronize`/`event`/
    `stream`, which fail there)."""
    accelerator = torch.device("cuda", 0) if available else None
    with (
        mock.patch.object(torch.cuda, "Event", event),
        mock.patch.object(torch.cuda, "is_available", lambda: available),
        mock.patch.object(torch.cuda, "device_count", lambda: int(available)),
        mock.patch.object(torch.cuda, "current_device", lambda: 0),
        mock.patch.object(torch.cuda, "synchronize", synchronize),
        mock.patch.object(torch.cuda, "current_stream", stream),
        mock.patch.object(torch.cuda, "default_stream", stream),
        mock.patch.object(torch.accelerator, "is_available", lambda: available),
        mock.patch.object(torch.accelerator, "current_accelerator", lambda *_a: accelerator),
        mock.patch.object(torch.accelerator, "device_count", lambda: int(available)),
        mock.patch.object(torch.accelerator, "current_device_index", lambda: 0),
        mock.patch.object(torch.accelerator, "synchronize", synchronize),
        mock.patch.object(torch.accelerator, "current_stream", stream),
    ):
        if available:
            with mock.patch.object(torch, "Event", event):
                yield
        else:
            yield


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _totals(timer: Any) -> dict[str, float]:
    got = timer.totals()
    return {name: float(got.get(name, 0.0)) for name in PHASES}


def _cpu(ctx: Ctx) -> None:
    cuda_calls: list[str] = []

    def no_device(name: str) -> Callable[..., Any]:
        def fail(*args: Any, **kwargs: Any) -> None:
            cuda_calls.append(f"{name}(...)")
            raise AssertionError("Torch not compiled with CUDA enabled")

        return fail

    a = torch.randn(192, 192)
    work = dict.fromkeys(PHASES, 0.0)  # each body, timed from inside
    outer = dict.fromkeys(PHASES, 0.0)  # each `with` statement, timed from outside
    try:
        with _cuda(
            False,
            no_device("torch.cuda/accelerator.synchronize"),
            no_device("torch.cuda.Event"),
            no_device("torch.cuda/accelerator.current_stream"),
        ):
            timer = ctx.attr("PhaseTimer")(torch.device("cpu"))
            for _ in range(STEPS):
                for name, count in CPU_MATMULS.items():
                    time.sleep(CPU_GAP_S)  # outside every phase
                    entered = time.perf_counter()
                    with timer.phase(name):
                        start = time.perf_counter()
                        for _ in range(count):
                            a = torch.tanh(a @ a)
                        work[name] += time.perf_counter() - start
                    outer[name] += time.perf_counter() - entered
            got = _totals(timer)
    except Exception as error:
        calls = f" (called {cuda_calls[0]} on CPU)" if cuda_calls else ""
        raised = where(error, ctx.user_file)
        detail = (
            f"on CPU the timer raised {raised}{calls}; expected it to time the phases. Likely "
            "cause: a device call made on CPU, where there is no CUDA device to synchronize"
        )
        ctx.check("cpu_times_phases", False, detail)
        return
    tol = 2 * STEPS * TOLERANCE_S
    short = [n for n in PHASES if got[n] < work[n] - tol]
    long = [n for n in PHASES if got[n] > outer[n] + tol]
    measured = ", ".join(
        f"{n} {_ms(got[n])} (its work {_ms(work[n])}, its `with` {_ms(outer[n])})" for n in PHASES
    )
    if cuda_calls:
        ok = False
        detail = (
            f"on CPU the timer called {cuda_calls[0]}; expected no device call on CPU. Likely "
            "cause: the synchronize is not conditional on device.type == 'cuda'"
        )
    elif short:
        ok = False
        detail = (
            f"on CPU {measured}; expected each total between its work and its `with` statement. "
            f"Likely cause: {', '.join(short)} timed over less than the phase's body (the "
            "clock is read inside it, or a reading is lost)"
        )
    elif long:
        ok = False
        detail = (
            f"on CPU {measured}; expected each total between its work and its `with` statement. "
            f"Likely cause: time outside the phase is charged to {', '.join(long)} (the clock runs "
            "from the previous phase's end, or a phase is counted twice)"
        )
    else:
        ok, detail = True, f"on CPU: {measured}"
    ctx.check("cpu_times_phases", ok, detail)


def _simulated_cuda(ctx: Ctx) -> None:
    stream = SimulatedStream()
    expected = {name: seconds * STEPS for name, seconds in PHASES.items()}
    spans: dict[str, list[tuple[int, int, float]]] = {name: [] for name in PHASES}
    try:
        with _cuda(True, stream.synchronize, stream.event_class(), lambda *_a, **_k: stream):
            timer = ctx.attr("PhaseTimer")(torch.device("cuda", 0))
            for _ in range(STEPS):
                stream.launch(COPY_S)  # the input copy, queued before the step
                for name, seconds in PHASES.items():
                    before = stream.queued  # work queued before the phase began
                    with timer.phase(name):
                        stream.launch(seconds)
                    spans[name].append((before, stream.queued, time.perf_counter()))
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
        f"on CUDA {', '.join(short)}; expected at least the phase's kernels' time. Likely cause: "
        "the clock was read before the device finished the phase's kernels (no synchronize "
        "before the reading at the end of the phase)"
        if short
        else "on CUDA every phase waits for its kernels: "
        + ", ".join(f"{name} {_ms(got[name])}" for name in PHASES),
    )
    # the most a phase may measure: from the end of the work queued before it (a right timer
    # reads its start clock, or its start event is reached, after that) to the end of its
    # `with` statement or of the work queued in it (an end event), whichever is later
    most = {
        name: sum(
            max(exited, stream.done[after - 1]) - stream.done[before - 1]
            for before, after, exited in spans[name]
        )
        for name in PHASES
    }
    long = [
        f"{name} {_ms(got[name])}, at most {_ms(most[name])} from the end of the work queued "
        "before it to the phase's end"
        for name in PHASES
        if got[name] > most[name] + 2 * STEPS * TOLERANCE_S
    ]
    ctx.check(
        "excludes_other_work",
        not long,
        f"on CUDA {', '.join(long)}; expected no more. Likely cause: the phase's start clock is "
        f"read while the {_ms(COPY_S)} input copy queued before the phase is still running "
        "(no synchronize before the reading at the start of the phase)"
        if long
        else "no phase is charged the input copy queued before it",
    )


def run(ctx: Ctx) -> None:
    _cpu(ctx)
    _simulated_cuda(ctx)

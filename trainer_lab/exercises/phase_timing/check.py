"""phase-timing: one process, three runs of the user's PhaseTimer over two steps of three phases.

On CPU the phases do real matmuls, each phase for at least CPU_WORK_S per step (the loop runs
until that much time has passed, so a fast machine does not shrink it). The checker times each
body itself from inside and each `with` statement from outside, so a right total lies between
the two, whatever the load: a preemption inside a body lengthens both the body and the timer's
reading, one outside only the `with`. The tolerance is a fraction of a millisecond per reading
(another clock than perf_counter, float rounding) and every phase's work per step is several
times the whole tolerance, so a timer that loses a step's reading, or keeps only the last one,
is short by more than the tolerance by construction, not by luck. A pause between phases
shows a timer that charges the time outside its phases. The CPU run is made twice: first as on
a machine that has a CUDA device (torch.cuda answers, every device call is recorded: timing a
CPU run must not wait on the GPU), then as on a CPU-only build (device calls fail).

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
CPU_WORK_S = {"forward": 0.008, "backward": 0.016, "optimizer": 0.005}  # at least, per step
CPU_GAP_S = 0.01  # a pause before each phase, outside it
TOLERANCE_S = 0.0002  # per reading: another clock than perf_counter, float rounding
CLOCK_RATE = 0.001  # and a fraction of the span: a clock that is slewed (time.time under NTP)
# each phase is read twice per step: the whole tolerance of a phase over the run (a timer that
# loses one step's reading of a phase is short by at least CPU_WORK_S, several times this)
PHASE_TOLERANCE_S = 2 * STEPS * TOLERANCE_S
MACHINE_GUARD = (
    "the device calls are guarded by whether the machine has a device (torch.cuda.is_available() "
    "or the like), not by the timer's device (device.type == 'cuda')"
)
UNGUARDED = "the device calls (synchronize, events) are not conditional on device.type == 'cuda'"


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
    available: bool,
    synchronize: Callable[..., None],
    event: Any,
    stream: Any,
    asked: list[str] | None = None,
) -> Iterator[None]:
    """torch.cuda and torch.accelerator as on a machine with one CUDA device (available), or
    as on a CPU-only build (every call that needs a device goes to `synchronize`/`event`/
    `stream`, which fail there). Each question about the machine is appended to `asked`."""
    accelerator = torch.device("cuda", 0) if available else None

    def answer(name: str, value: Any) -> Callable[..., Any]:
        def ask(*_args: Any, **_kwargs: Any) -> Any:
            if asked is not None:
                asked.append(name)
            return value

        return ask

    with (
        mock.patch.object(torch.cuda, "Event", event),
        mock.patch.object(torch.cuda, "is_available", answer("torch.cuda.is_available", available)),
        mock.patch.object(
            torch.cuda, "device_count", answer("torch.cuda.device_count", int(available))
        ),
        mock.patch.object(torch.cuda, "current_device", lambda: 0),
        mock.patch.object(torch.cuda, "synchronize", synchronize),
        mock.patch.object(torch.cuda, "current_stream", stream),
        mock.patch.object(torch.cuda, "default_stream", stream),
        mock.patch.object(
            torch.accelerator, "is_available", answer("torch.accelerator.is_available", available)
        ),
        mock.patch.object(
            torch.accelerator,
            "current_accelerator",
            answer("torch.accelerator.current_accelerator", accelerator),
        ),
        mock.patch.object(
            torch.accelerator,
            "device_count",
            answer("torch.accelerator.device_count", int(available)),
        ),
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


def _busy(a: torch.Tensor, seconds: float) -> torch.Tensor:
    """Matmuls until at least `seconds` have passed (real work, whatever the machine's speed)."""
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        a = torch.tanh(a @ a)
    return a


def _cpu_run(
    ctx: Ctx, calls: list[str], asked: list[str], gpu_machine: bool
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """One CPU run: the timer's totals, each body timed from inside, each `with` from outside.
    On a machine with a GPU (gpu_machine) device calls are recorded and answered by an idle
    device; on a CPU-only build they are recorded and fail."""

    def on_device(name: str, answer: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(f"{name}(...)")
            if not gpu_machine:
                raise AssertionError("Torch not compiled with CUDA enabled")
            return answer(*args, **kwargs)

        return call

    idle = SimulatedStream()  # the GPU of a machine that has one: nothing queued on it
    a = torch.randn(64, 64) / 8
    work = dict.fromkeys(PHASES, 0.0)
    outer = dict.fromkeys(PHASES, 0.0)
    with _cuda(
        gpu_machine,
        on_device("torch.cuda/accelerator.synchronize", idle.synchronize),
        on_device("torch.cuda.Event", idle.event_class()),
        on_device("torch.cuda/accelerator.current_stream", lambda *_a, **_k: idle),
        asked,
    ):
        timer = ctx.attr("PhaseTimer")(torch.device("cpu"))
        for _ in range(STEPS):
            for name, seconds in CPU_WORK_S.items():
                time.sleep(CPU_GAP_S)  # outside every phase
                entered = time.perf_counter()
                with timer.phase(name):
                    start = time.perf_counter()
                    a = _busy(a, seconds)
                    work[name] += time.perf_counter() - start
                outer[name] += time.perf_counter() - entered
        return _totals(timer), work, outer


def _cpu(ctx: Ctx) -> None:
    # first beside a GPU (a timer that asks the machine, and caches the answer, is caught on
    # both machines), then on a CPU-only build
    on_gpu_machine: list[str] = []
    on_cpu_build: list[str] = []
    asked: list[str] = []
    try:
        runs = [
            _cpu_run(ctx, on_gpu_machine, asked, gpu_machine=True),
            _cpu_run(ctx, on_cpu_build, asked, gpu_machine=False),
        ]
    except Exception as error:
        calls = on_cpu_build or on_gpu_machine
        called = f" (called {calls[0]} on CPU)" if calls else ""
        cause = (
            (MACHINE_GUARD if asked else UNGUARDED)
            if calls
            else "a device call made on CPU, where there is no CUDA device to synchronize"
        )
        detail = (
            f"on CPU the timer raised {where(error, ctx.user_file)}{called}; expected it to time "
            f"the phases. Likely cause: {cause}"
        )
        ctx.check("cpu_times_phases", False, detail)
        return

    def slack(seconds: float) -> float:
        return PHASE_TOLERANCE_S + CLOCK_RATE * seconds

    def verdict(got: dict[str, float], work: dict[str, float], outer: dict[str, float]) -> tuple:
        short = [n for n in PHASES if got[n] < work[n] - slack(work[n])]
        long = [n for n in PHASES if got[n] > outer[n] + slack(outer[n])]
        measured = ", ".join(
            f"{n} {_ms(got[n])} (its work {_ms(work[n])}, its `with` {_ms(outer[n])})"
            for n in PHASES
        )
        return short, long, measured

    # the first run that is off (a timer may differ between runs), else the first
    verdicts = [verdict(*run) for run in runs]
    short, long, measured = next((v for v in verdicts if v[0] or v[1]), verdicts[0])
    if on_gpu_machine:
        ok = False
        detail = (
            f"on CPU, on a machine that has a CUDA device, the timer called {on_gpu_machine[0]}; "
            "expected no device call when the timer's device is the CPU (it would wait for "
            "unrelated GPU work). Likely cause: " + (MACHINE_GUARD if asked else UNGUARDED)
        )
    elif short:
        ok = False
        detail = (
            f"on CPU {measured}; expected each total between its work and its `with` statement. "
            f"Likely cause: {', '.join(short)} timed over less than the phase's body (a step's "
            "reading is lost or overwritten instead of added, or the clock is read inside it)"
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
    device_calls: list[str] = []  # the timer's synchronize calls and events (not the checker's)
    event_class = stream.event_class()
    after_first = dict.fromkeys(PHASES, 0.0)

    def synchronize(*args: Any, **kwargs: Any) -> None:
        device_calls.append("synchronize")
        stream.synchronize()

    def event(*args: Any, **kwargs: Any) -> Any:
        device_calls.append("Event")
        return event_class(*args, **kwargs)

    try:
        with _cuda(True, synchronize, event, lambda *_a, **_k: stream):
            timer = ctx.attr("PhaseTimer")(torch.device("cuda", 0))
            for step in range(STEPS):
                stream.launch(COPY_S)  # the input copy, queued before the step
                for name, seconds in PHASES.items():
                    before = stream.queued  # work queued before the phase began
                    with timer.phase(name):
                        stream.launch(seconds)
                    spans[name].append((before, stream.queued, time.perf_counter()))
                if step == 0:
                    after_first = _totals(timer)  # totals() may be read at any time
            stream.synchronize()
            got = _totals(timer)
    except Exception as error:
        detail = f"on CUDA the timer raised {where(error, ctx.user_file)}"
        ctx.check("waits_for_the_device", False, detail)
        ctx.check("excludes_other_work", False, "not measured: " + detail)
        return
    short = [name for name in PHASES if got[name] < expected[name] - PHASE_TOLERANCE_S]
    # the first step timed in full, the run's total short of the sum: a reading was dropped
    lost = [
        name
        for name in short
        if after_first[name] >= PHASES[name] - PHASE_TOLERANCE_S / STEPS
        and got[name] < after_first[name] + PHASES[name] - PHASE_TOLERANCE_S / STEPS
    ]
    if lost:
        cause = (
            f"{', '.join(lost)} after step 1 "
            + ", ".join(_ms(after_first[name]) for name in lost)
            + ": the phase was timed, but a step's reading is lost or overwritten instead of "
            "added to the total"
        )
    elif not device_calls:
        cause = (
            "the clock was read before the device finished the phase's kernels: the timer made "
            "no device call in the whole CUDA run (no synchronize, no event; a condition "
            "that is not the timer's device, such as torch.cuda.is_available() read once at "
            "import, can hide it)"
        )
    else:
        cause = (
            "the clock was read before the device finished the phase's kernels (no synchronize "
            "before the reading at the end of the phase)"
        )
    measured = ", ".join(
        f"{name} {_ms(got[name])} for {_ms(expected[name])} of queued work" for name in short
    )
    ctx.check(
        "waits_for_the_device",
        not short,
        f"on CUDA {measured}; expected at least the phase's kernels' time. Likely cause: {cause}"
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
        if got[name] > most[name] + PHASE_TOLERANCE_S
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

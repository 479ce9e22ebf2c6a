"""Right, the other way: CUDA events recorded around each phase, read after one synchronize in
totals(); the CPU path uses the host clock."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._host: dict[str, float] = defaultdict(float)
        self._events: dict[str, list] = defaultdict(list)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if self.device.type != "cuda":
            start = time.perf_counter()
            yield
            self._host[name] += time.perf_counter() - start
            return
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        yield
        end.record()
        self._events[name].append((start, end))

    def totals(self) -> dict[str, float]:
        if self.device.type != "cuda":
            return dict(self._host)
        torch.cuda.synchronize(self.device)
        return {
            name: sum(start.elapsed_time(end) for start, end in pairs) / 1000.0
            for name, pairs in self._events.items()
        }

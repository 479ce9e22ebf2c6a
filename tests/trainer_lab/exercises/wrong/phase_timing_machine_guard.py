"""Wrong: synchronizes whenever the machine has a GPU, whatever device the timer is for: timing
a CPU run on a GPU machine waits on the GPU (and makes a CUDA context)."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self._totals: dict[str, float] = defaultdict(float)

    def _sync(self) -> None:
        if torch.cuda.device_count() > 0:
            torch.cuda.synchronize()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._sync()
        start = time.perf_counter()
        try:
            yield
        finally:
            self._sync()
            self._totals[name] += time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

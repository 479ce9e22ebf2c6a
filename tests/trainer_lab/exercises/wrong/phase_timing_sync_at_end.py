"""Wrong: synchronizes only when a phase ends, so whatever was still queued when the phase began
(the input copy) is charged to it."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._totals: dict[str, float] = defaultdict(float)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        self._totals[name] += time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

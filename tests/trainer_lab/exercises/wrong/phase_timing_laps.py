"""Wrong: synchronizes right, but times laps: each phase runs from the end of the previous
phase, so whatever happens between phases is charged to the next one."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._totals: dict[str, float] = defaultdict(float)
        self._last: float | None = None

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._sync()
        start = self._last if self._last is not None else time.perf_counter()
        yield
        self._sync()
        self._last = time.perf_counter()
        self._totals[name] += self._last - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

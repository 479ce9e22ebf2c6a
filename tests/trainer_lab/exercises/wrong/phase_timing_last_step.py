"""Wrong: synchronizes right, but stores each phase's time instead of adding it, so totals()
holds the last step's phases only."""

import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._totals: dict[str, float] = {}

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._sync()
        start = time.perf_counter()
        try:
            yield
        finally:
            self._sync()
            self._totals[name] = time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

"""The clock is read on the host, the work runs on the device: on CUDA, synchronize before every
clock read, at the start (so queued work from before is not charged to the phase) and at the
end (so the phase's own kernels are). On CPU ops finish before they return: no sync, no CUDA."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._totals: dict[str, float] = defaultdict(float)

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
            self._totals[name] += time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

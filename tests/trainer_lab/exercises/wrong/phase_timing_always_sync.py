"""Wrong: synchronizes at both ends but unconditionally, as if every machine had CUDA."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self._totals: dict[str, float] = defaultdict(float)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        torch.cuda.synchronize()
        start = time.perf_counter()
        yield
        torch.cuda.synchronize()
        self._totals[name] += time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

"""Wrong: asks once, at import, whether the machine has CUDA, instead of looking at the timer's
device: a module imported before CUDA is set up (or on another machine) never synchronizes."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch

HAS_CUDA = torch.cuda.is_available()


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self._totals: dict[str, float] = defaultdict(float)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if HAS_CUDA:
            torch.cuda.synchronize()
        start = time.perf_counter()
        try:
            yield
        finally:
            if HAS_CUDA:
                torch.cuda.synchronize()
            self._totals[name] += time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

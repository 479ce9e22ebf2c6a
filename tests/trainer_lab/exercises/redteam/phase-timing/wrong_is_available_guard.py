# WRONG (class: guards on torch.cuda.is_available() instead of the timer's device). On a GPU box
# timing a CPU run it still calls torch.cuda.synchronize() (a CUDA call on CPU, which also
# initialises a CUDA context); the brief says no CUDA call may be made on CPU. On a CPU-only box
# it looks right. A good checker must FAIL (e.g. by faking is_available() True for a CPU timer
# and counting CUDA calls).
# Modern style: functools.cache'd capability probe.
import functools
import time
from collections import defaultdict
from contextlib import contextmanager

import torch


@functools.cache
def _has_cuda() -> bool:
    return torch.cuda.is_available()


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._totals = defaultdict(float)

    def _sync(self) -> None:
        if _has_cuda():
            torch.cuda.synchronize()

    @contextmanager
    def phase(self, name: str):
        self._sync()
        start = time.perf_counter()
        yield
        self._sync()
        self._totals[name] += time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

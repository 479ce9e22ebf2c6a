# WRONG (class: synchronize at the wrong place -- only at the end). The end-of-phase sync is
# there, but the start reading does not wait: kernels queued by the PREVIOUS phase (or by code
# outside any phase) that are still running get billed to this phase. A good checker must FAIL
# (e.g. async work before a phase is attributed to it).
# Modern style: contextmanager with try/finally.
import time
from collections import defaultdict
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._totals = defaultdict(float)

    @contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self._totals[name] += time.perf_counter() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

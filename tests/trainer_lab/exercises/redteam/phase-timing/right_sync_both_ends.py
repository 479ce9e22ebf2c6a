# RIGHT. Synchronizes the device right before reading the clock at the start of a phase (so work
# queued by earlier phases is not billed here) and right before reading it at the end (so this
# phase's kernels are billed here). Only when device.type == "cuda"; on CPU no torch.cuda call at
# all. Uses torch.device(...) normalisation so a string device works too.
# Modern style: dataclass + contextmanager + time.perf_counter_ns.
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch


@dataclass
class PhaseTimer:
    device: torch.device
    _ns: defaultdict = field(default_factory=lambda: defaultdict(int), init=False)

    def _now(self) -> int:
        if torch.device(self.device).type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter_ns()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = self._now()
        try:
            yield
        finally:
            self._ns[name] += self._now() - start

    def totals(self) -> dict[str, float]:
        return {k: v / 1e9 for k, v in self._ns.items()}

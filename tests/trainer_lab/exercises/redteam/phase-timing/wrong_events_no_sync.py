# WRONG (class: CUDA events read without waiting, and CPU path broken). Records start/end CUDA
# events and calls elapsed_time() right away without synchronizing the end event (raises or reads
# an unfinished event on CUDA); on CPU it also creates torch.cuda.Event (a CUDA call on CPU).
# A good checker must FAIL (CUDA call on CPU; on CUDA, un-waited reading).
# Modern style: CUDA events as the timing source.
from collections import defaultdict
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._totals = defaultdict(float)

    @contextmanager
    def phase(self, name: str):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        yield
        end.record()
        self._totals[name] += start.elapsed_time(end) / 1000.0

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

# RIGHT. On CUDA the phase is bracketed by CUDA events recorded on the current stream (start after
# all previously queued work, end after this phase's kernels); elapsed_time is read after
# end.synchronize(), so the reading waits for the device and excludes earlier queued work. On CPU
# no CUDA API is touched: time.perf_counter. Modern style: CUDA events + contextmanager.
import time
from collections import defaultdict
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._totals: dict[str, float] = defaultdict(float)

    @contextmanager
    def phase(self, name: str):
        if self.device.type != "cuda":
            start = time.perf_counter()
            try:
                yield
            finally:
                self._totals[name] += time.perf_counter() - start
            return
        start_ev = torch.cuda.Event(enable_timing=True)
        end_ev = torch.cuda.Event(enable_timing=True)
        start_ev.record()
        try:
            yield
        finally:
            end_ev.record()
            end_ev.synchronize()
            self._totals[name] += start_ev.elapsed_time(end_ev) / 1000.0

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

"""Right, another style: the device-generic torch.accelerator API (synchronize when the device is
the current accelerator's type), a monotonic clock, and start/end readings in one helper."""

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)
        self._totals: Counter[str] = Counter()

    def _now(self) -> float:
        accelerator = torch.accelerator.current_accelerator()
        if accelerator is not None and self.device.type == accelerator.type:
            torch.accelerator.synchronize()
        return time.monotonic()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = self._now()
        try:
            yield
        finally:
            self._totals[name] += self._now() - start

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

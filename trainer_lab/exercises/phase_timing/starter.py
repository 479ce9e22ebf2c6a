"""A timer for the phases of a training step:

    timer = PhaseTimer(device)
    with timer.phase("forward"):
        loss = model(x).loss
    with timer.phase("backward"):
        loss.backward()
    ...
    timer.totals()  # {"forward": seconds, "backward": seconds, ...}, summed over all steps

It must be right on CUDA (kernels run behind the host) and on CPU. Run
`drill exercise check phase-timing`."""

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class PhaseTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._totals: dict[str, float] = defaultdict(float)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self._totals[name] += time.perf_counter() - start  # TODO: is the work done here?

    def totals(self) -> dict[str, float]:
        return dict(self._totals)

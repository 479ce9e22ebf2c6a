"""Device helpers for the lab tests: pin a test to the CPU path, or mark it as GPU-only.

Labs take CUDA whenever it is visible (trainer_lab.train.worker.init_distributed), so a test
about the CPU path hides CUDA from the lab's processes instead of skipping on a GPU machine:
`hide_cuda(monkeypatch)` sets CUDA_VISIBLE_DEVICES="" in the test process, and run_lab passes
the environment down to the driver, torchrun and every rank. tests/conftest.py does the same for
every test not marked `gpu` (the explicit calls document which tests are about the CPU path). A
test about the GPU path is decorated with `needs_cuda`: marked `gpu`, skipped where no GPU is
visible.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

from trainer_lab.devices import visible_gpus

T = TypeVar("T", bound=Callable[..., object])


def hide_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab's processes see no GPU (CUDA reads CUDA_VISIBLE_DEVICES at initialisation)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")


def needs_cuda(test: T) -> T:
    """Mark a test `gpu` and skip it unless a GPU is visible."""
    skip = pytest.mark.skipif(visible_gpus() == 0, reason="no GPU visible (CUDA path)")
    return pytest.mark.gpu(skip(test))

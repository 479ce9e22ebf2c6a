# RIGHT. Saves everything that feeds the next steps: model, AdamW (moments + step counts), LR
# scheduler, GradScaler (scale + growth tracker), the sampler's position, and every RNG the loop
# draws from: torch CPU generator (dropout), python `random`, numpy's global RNG when numpy is
# importable, and the CUDA generators when CUDA is initialised. load() restores all of them, RNG
# last, so nothing in load consumes randomness after the restore.
# Modern style: dataclass + asdict, torch.save/torch.load(weights_only=False).
import random
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn
from torch.utils.data import Sampler

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None


@dataclass
class _Snapshot:
    model: dict
    optimizer: dict
    scheduler: dict
    scaler: dict
    sampler: dict
    torch_rng: torch.Tensor
    python_rng: Any
    numpy_rng: Any
    cuda_rng: Any


def save(path: str, model: nn.Module, optimizer, scheduler, scaler, sampler: Sampler[int]) -> None:
    snap = _Snapshot(
        model=model.state_dict(),
        optimizer=optimizer.state_dict(),
        scheduler=scheduler.state_dict(),
        scaler=scaler.state_dict(),
        sampler=sampler.state_dict(),
        torch_rng=torch.get_rng_state(),
        python_rng=random.getstate(),
        numpy_rng=np.random.get_state() if np is not None else None,
        cuda_rng=torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None,
    )
    torch.save(asdict(snap), path)


def load(path: str, model: nn.Module, optimizer, scheduler, scaler, sampler: Sampler[int]) -> None:
    snap = _Snapshot(**torch.load(path, weights_only=False))
    model.load_state_dict(snap.model)
    optimizer.load_state_dict(snap.optimizer)
    scheduler.load_state_dict(snap.scheduler)
    scaler.load_state_dict(snap.scaler)
    sampler.load_state_dict(snap.sampler)
    random.setstate(snap.python_rng)
    if np is not None and snap.numpy_rng is not None:
        np.random.set_state(snap.numpy_rng)
    if snap.cuda_rng is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(snap.cuda_rng)
    torch.set_rng_state(snap.torch_rng)

"""Small torch helpers the checkers share (torch; imported only by check modules)."""

from __future__ import annotations

import hashlib

import torch
from torch import nn


def tiny_mlp(seed: int = 0, width: int = 16, depth: int = 3) -> nn.Sequential:
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.Tanh()]
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


def batches(
    seed: int, count: int, size: int = 8, width: int = 16
) -> list[tuple[torch.Tensor, ...]]:
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(size, width, generator=g), torch.randn(size, 1, generator=g))
            for _ in range(count)]  # fmt: skip


def digest(tensors: list[torch.Tensor]) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().contiguous().reshape(-1).numpy().tobytes())
    return h.hexdigest()[:16]


def params_digest(model: nn.Module) -> str:
    return digest([p for p in model.parameters()])


def flat(model: nn.Module) -> list[float]:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).tolist()


def list_diff(a: list[float], b: list[float]) -> float:
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)


def train_reference(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    data: list[list[tuple[torch.Tensor, ...]]],
    steps: int,
) -> nn.Module:
    """What data-parallel training must equal: one process stepping on every rank's batch of
    each step concatenated (`data[rank][step]` is a rank's (x, y)); returns `model`."""
    for step in range(steps):
        x = torch.cat([d[step][0] for d in data])
        y = torch.cat([d[step][1] for d in data])
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return model

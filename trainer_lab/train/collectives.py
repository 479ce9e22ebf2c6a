"""Small collectives the labs' workers share (torch): a flattened gradient average and an
all-reduce of a dict of numbers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.distributed as dist


def average_gradients(params: Iterable[torch.nn.Parameter], world: int) -> None:
    """Average the parameters' gradients over the ranks with one flattened all_reduce (SUM, then
    / world), written back in place; parameters without a gradient are left out."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.flatten() for g in grads])
    dist.all_reduce(flat)
    flat /= world
    offset = 0
    for g in grads:
        g.copy_(flat[offset : offset + g.numel()].view_as(g))
        offset += g.numel()


def reduce_numbers(values: dict[str, float], op: Any, device: Any) -> dict[str, float]:
    """all_reduce a dict of numbers as one float64 tensor (`op`: SUM, MAX ... over the ranks);
    the values as given without a process group."""
    names = sorted(values)
    t = torch.tensor([values[n] for n in names], dtype=torch.float64, device=device)
    if dist.is_initialized():
        dist.all_reduce(t, op=op)
    return dict(zip(names, t.tolist(), strict=True))

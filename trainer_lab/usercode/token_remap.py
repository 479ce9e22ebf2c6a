"""Under the grader, the token ids an nn.Embedding reads that are not in [low, high) (padding,
whatever value the script padded with) are read as `value` instead (torch): two launches with
two values see the same real tokens and different padding, so a script whose loss or attention
reads its padding trains differently in them (the biotech round's masks check)."""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.modules.module import register_module_forward_pre_hook
from torch.utils.hooks import RemovableHandle


def remap_padding(low: int, high: int, value: int) -> RemovableHandle:
    """Install the remap for every nn.Embedding of this process (the handle removes it)."""

    def hook(module: torch.nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if not isinstance(module, torch.nn.Embedding) or not args:
            return None
        ids = args[0]
        if not isinstance(ids, torch.Tensor) or ids.is_floating_point():
            return None
        outside = (ids < low) | (ids >= high)
        if not bool(outside.any()):
            return None
        return (torch.where(outside, torch.full_like(ids, value), ids), *args[1:])

    return register_module_forward_pre_hook(hook)

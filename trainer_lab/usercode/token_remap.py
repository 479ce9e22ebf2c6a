"""Under the grader, the token ids the model's token embedding (an nn.Embedding of `vocab` rows;
a position embedding is left alone) reads that are not in [low, high) (padding, whatever value
the script padded with) are read as `decoy` instead (torch), an id that is not the launch's
PAD_ID, so that a `padding_idx=PAD_ID` row of zeros cannot hide padding: two launches with two
decoys see the same real tokens and different padding, so a script whose loss or attention reads
its padding trains differently in them (the biotech round's masks check). Each read also reports
how many real tokens (ids in [low, high)) it embedded, how many ids that are neither real nor
the launch's PAD_ID, how many ids it read in all (its slots), in how many rows, and whether
gradients were on: padding with a real token, or sequences cut short, change the first against
the residues read; padding with a literal id shows in the second; rows against the sequences
read tell packed rows and batches from one sequence per forward; reads without gradients after
the last step are the evaluation's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.nn.modules.module import register_module_forward_pre_hook
from torch.utils.hooks import RemovableHandle

OnTokens = Callable[[int, int, int, int, bool], None]


def remap_padding(
    low: int, high: int, pad_id: int, decoy: int, vocab: int, on_tokens: OnTokens | None = None
) -> RemovableHandle:
    """Install the remap for every nn.Embedding of `vocab` rows in this process (the handle
    removes it); `on_tokens(real, other, slots, rows, grad)`: a forward embedded `real` real
    tokens and `other` ids that are neither real nor `pad_id` (a literal pad id) out of `slots`
    ids in all, laid out in `rows` rows (1 for a 1-D tensor), with gradients on or not."""

    def hook(module: torch.nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if not isinstance(module, torch.nn.Embedding) or module.num_embeddings != vocab:
            return None
        ids = args[0] if args else None
        if not isinstance(ids, torch.Tensor) or ids.is_floating_point():
            return None
        outside = (ids < low) | (ids >= high)
        if on_tokens is not None:
            padding = int(outside.sum())
            slots, rows = int(ids.numel()), int(ids.shape[0]) if ids.dim() > 1 else 1
            literal = padding - int((ids == pad_id).sum())
            on_tokens(slots - padding, literal, slots, rows, torch.is_grad_enabled())
        if not bool(outside.any()):
            return None
        return (torch.where(outside, torch.full_like(ids, decoy), ids), *args[1:])

    return register_module_forward_pre_hook(hook)


def record_backward_losses(on_loss: Callable[[float], None]) -> None:
    """Report the value of every scalar a backward pass starts from (torch.autograd.backward,
    which Tensor.backward calls; not a backward nested in another): the loss the rank trained
    on, to compare with the loss it prints."""
    original = torch.autograd.backward
    depth = [0]

    def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
        # a plain tensor only: reading a subclass's value (a DTensor's) may run a collective
        if depth[0] == 0 and type(tensors) is torch.Tensor and tensors.numel() == 1:
            on_loss(float(tensors.detach().float().cpu()))
        depth[0] += 1
        try:
            return original(tensors, *args, **kwargs)
        finally:
            depth[0] -= 1

    torch.autograd.backward = backward

"""activation-checkpointing worker (imports torch).

For each depth, the trainer's tiny GPT is measured without and with per-block activation
checkpointing (`torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)`):
- saved bytes: every tensor autograd saves for backward passes through a saved-tensor hook
  (parameters excluded, storages counted once). With checkpointing, a block saves only its
  input; its internals are recomputed during backward.
- FLOPs of forward + backward (torch.utils.flop_counter) and how often each block's forward
  runs: the recompute cost, counted rather than timed.
- median forward + backward time over a few steps of the reference trainer (its phase timers),
  the two models' steps alternating (reported, not checked: timing is noisy on a shared box).
The model is the reference trainer's; checkpointing is applied as its parallelize step.
- attention alone, at seq_len and 2 x seq_len: the bytes saved for backward by math attention
  (softmax(QK^T)V, which keeps the T x T score matrix) and by
  `scaled_dot_product_attention` (a fused kernel that keeps output and log-sum-exp only).
Rank 0 measures; other ranks wait.
"""

from __future__ import annotations

import statistics
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint
from torch.utils.flop_counter import FlopCounterMode

from trainer_lab.config import TrainConfig
from trainer_lab.train.model import build_model, loss_fn
from trainer_lab.train.spec import TrainSpec
from trainer_lab.train.trainer import Trainer
from trainer_lab.train.worker import WorkerContext


class Checkpointed(nn.Module):
    """Runs the wrapped block under non-reentrant activation checkpointing."""

    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(self.block, x, use_reentrant=False)


def apply_checkpointing(model: nn.Module, mode: str) -> nn.Module:
    """Activation checkpointing as a parallelize step: per block, around the whole model
    (sabotage), or none."""
    if mode == "per_block":
        model.blocks = nn.ModuleList(Checkpointed(b) for b in model.blocks)
    elif mode == "whole_model":  # sabotage: one checkpoint around everything
        inner = model.forward
        model.forward = lambda idx: checkpoint(inner, idx, use_reentrant=False)  # type: ignore[method-assign]
    return model


def build(cfg: TrainConfig, mode: str, batch: int) -> tuple[Trainer, list[int]]:
    """A one-rank reference trainer for a mode, and a list counting the block forward calls."""
    calls = [0]

    def counted(cfg: TrainConfig) -> nn.Module:
        model = build_model(cfg)
        for block in model.blocks:
            block.register_forward_pre_hook(lambda _m, _a: calls.__setitem__(0, calls[0] + 1))
        return model

    plan = TrainSpec(
        build_model=counted, parallelize=lambda model, _where: apply_checkpointing(model, mode)
    )
    # one global batch of `batch` sequences per epoch: every timed step has the same shape
    one_batch = cfg.with_(global_batch=batch, n_samples=batch, log_every=0)
    return Trainer(one_batch, rank=0, world_size=1, spec=plan), calls


def batch_of(cfg: TrainConfig, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(cfg.seed)
    x = torch.randint(cfg.vocab, (batch, cfg.seq_len), generator=gen)
    return x, torch.randint(cfg.vocab, (batch, cfg.seq_len), generator=gen)


def measure(cfg: TrainConfig, model: nn.Module, calls: list[int], batch: int) -> dict[str, Any]:
    x, y = batch_of(cfg, batch)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params:
            saved[ptr] = t.untyped_storage().nbytes()
        return t

    calls[0] = 0
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = loss_fn(cfg, model(x), y)
    forward_calls = calls[0]
    loss.backward()
    total_calls = calls[0]
    model.zero_grad(set_to_none=True)
    with FlopCounterMode(display=False) as counter:
        loss_fn(cfg, model(x), y).backward()
    model.zero_grad(set_to_none=True)
    return {
        "saved_bytes": sum(saved.values()),
        "saved_tensors": len(saved),
        "block_forwards": {"forward": forward_calls, "backward": total_calls - forward_calls},
        "flops": counter.get_total_flops(),
    }


def math_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v


def attention_saved_bytes(kind: str, batch: int, heads: int, seq: int, head_dim: int) -> int:
    """Bytes autograd saves for backward of one attention call, its inputs excluded."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(batch, heads, seq, head_dim, generator=gen).requires_grad_() for _ in range(3)
    )
    inputs = {t.untyped_storage().data_ptr() for t in (q, k, v)}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in inputs:
            saved[ptr] = t.untyped_storage().nbytes()
        return t

    attend = math_attention if kind == "math" else F.scaled_dot_product_attention
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        attend(q, k, v).sum().backward()
    return sum(saved.values())


def time_steps(trainers: dict[str, Trainer], steps: int) -> dict[str, float]:
    """Median forward + backward time per trainer (its phase timers), alternating the trainers'
    steps so drift hits both."""
    times: dict[str, list[float]] = {name: [] for name in trainers}
    for _ in range(steps):
        for name, trainer in trainers.items():
            phases = trainer.train_step()["phases"]
            times[name].append(phases["forward"] + phases["backward"])
    return {name: round(1e3 * statistics.median(t), 3) for name, t in times.items()}


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        base = TrainConfig.from_dict(spec["config"])
        sabotage = spec["sabotage"]
        modes = {
            "none": "whole_model" if sabotage == "flat_memory" else "none",
            "per_block": "none" if sabotage == "no_checkpoint" else "per_block",
        }
        for depth in spec["depths"]:
            cfg = base.with_(n_layer=depth)
            built = {label: build(cfg, mode, spec["batch"]) for label, mode in modes.items()}
            results = {
                label: measure(cfg, trainer.model, calls, spec["batch"])
                for label, (trainer, calls) in built.items()
            }
            trainers = {label: trainer for label, (trainer, _) in built.items()}
            step_ms = time_steps(trainers, spec["timed_steps"])
            for label, result in results.items():
                ctx.events().write(
                    "activation",
                    depth=depth,
                    checkpointing=label,
                    step_ms=step_ms[label],
                    **result,
                )
        heads = base.n_head
        sdpa_kind = "math" if sabotage == "sdpa_is_math" else "sdpa"
        for seq in (base.seq_len, 2 * base.seq_len):
            ctx.events().write(
                "attention",
                seq_len=seq,
                math=attention_saved_bytes(
                    "math", spec["batch"], heads, seq, base.d_model // heads
                ),
                sdpa=attention_saved_bytes(
                    sdpa_kind, spec["batch"], heads, seq, base.d_model // heads
                ),
            )
        ctx.log("activation-checkpointing done")
    if dist.is_initialized():
        dist.barrier()

"""The builders a `Trainer` plugs together (imports torch).

As TorchTitan's train spec plugs a model, a parallelize function, an optimizer and a data loader
into one trainer, a lab whose training loop is incidental hands the reference trainer a
`TrainSpec` instead of writing its own loop: the step, its phase timers and its step events stay
the trainer's. Every field has the reference trainer's own default, so `TrainSpec()` is the
trainer as configured by `TrainConfig` alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR, LRScheduler

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import build_loader
from trainer_lab.train.model import build_model, loss_fn

if TYPE_CHECKING:
    from trainer_lab.train.trainer import Trainer


@dataclass(frozen=True)
class Placement:
    """Where the model trains and with how many ranks: what a parallelize builder needs."""

    device: torch.device
    rank: int
    world_size: int


def build_adamw(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)


def lr_lambda(cfg: TrainConfig) -> Callable[[int], float]:
    """Linear warm-up over cfg.warmup_steps, then cosine decay to 10 % over cfg.decay_steps."""

    def factor(step: int) -> float:
        if step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        progress = min((step - cfg.warmup_steps) / max(cfg.decay_steps, 1), 1.0)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    return factor


def build_warmup_cosine(optimizer: torch.optim.Optimizer, cfg: TrainConfig) -> LRScheduler:
    return LambdaLR(optimizer, lr_lambda(cfg))


def build_constant_lr(optimizer: torch.optim.Optimizer, cfg: TrainConfig) -> LRScheduler:
    """cfg.lr at every step (a hand-written loop's plain optimizer)."""
    return LambdaLR(optimizer, lambda _step: 1.0)


@dataclass(frozen=True)
class TrainSpec:
    # cfg -> the bare model (on CPU; the trainer seeds first, then moves it to the device)
    build_model: Callable[[TrainConfig], nn.Module] = build_model
    # (model on its device, placement) -> the module the step calls: DDP, fully_shard,
    # activation checkpointing, torch.compile... None: TrainConfig.grad_sync (ddp | explicit)
    # at world size > 1. A given parallelize owns all gradient communication.
    parallelize: Callable[[nn.Module, Placement], nn.Module] | None = None
    # (the bare model after parallelize, cfg) -> the optimizer
    build_optimizer: Callable[[nn.Module, TrainConfig], torch.optim.Optimizer] = build_adamw
    # (optimizer, cfg) -> the LR schedule, stepped once per optimizer step
    build_scheduler: Callable[[torch.optim.Optimizer, TrainConfig], LRScheduler] = (
        build_warmup_cosine
    )
    # (cfg, world size, rank) -> (loader of (ids, x, y) batches, ResumableSampler)
    build_loader: Callable[[TrainConfig, int, int], tuple] = build_loader
    loss: Callable[[TrainConfig, torch.Tensor, torch.Tensor], torch.Tensor] = loss_fn
    # forward under torch.autocast(device type, dtype) when set (TrainConfig.amp: fp16 + a
    # GradScaler on CUDA, is the other way)
    autocast: torch.dtype | None = None
    # called after backward and gradient sync, before the optimizer step (gradients complete)
    on_grads: Callable[[Trainer], None] | None = None
    # called after the optimizer step, before the gradients are freed
    after_optimizer: Callable[[Trainer], None] | None = None

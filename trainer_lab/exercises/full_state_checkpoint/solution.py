"""A resume is exact when everything the next step reads is restored: weights, optimizer moments
and step, the scheduler's position, the loss scale, the sampler's position in the epoch, and the
RNG streams (dropout masks, data randomness)."""

import random

import torch
from torch import nn
from torch.utils.data import Sampler


def save(
    path: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    scaler: torch.amp.GradScaler,
    sampler: Sampler[int],  # this one has state_dict() / load_state_dict() too
) -> None:
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": scaler.state_dict(),
            "sampler": sampler.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "python_rng": random.getstate(),
        },
        path,
    )


def load(
    path: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    scaler: torch.amp.GradScaler,
    sampler: Sampler[int],
) -> None:
    state = torch.load(path, weights_only=False)  # our own file: it holds python objects too
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    scaler.load_state_dict(state["scaler"])
    sampler.load_state_dict(state["sampler"])
    torch.set_rng_state(state["torch_rng"])  # last: nothing after this draws before training
    random.setstate(state["python_rng"])

"""Checkpoint for a bit-exact resume. save(path, ...) is called after step K of a training run
(an AdamW optimizer, an LR scheduler stepped every step, dropout in the model, python random in
the loop); after a restart load(path, ...) gets freshly built model, optimizer and scheduler and
a reseeded process, and the run must continue exactly as if it had never stopped. Run
`drill exercise check full-state-checkpoint`."""

import torch
from torch import nn


def save(
    path: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> None:
    torch.save({"model": model.state_dict()}, path)  # TODO: is the model all there is?


def load(
    path: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> None:
    state = torch.load(path)
    model.load_state_dict(state["model"])

"""Checkpoint for a bit-exact resume. save(path, ...) is called after step K of a training run,
in the middle of an epoch: an AdamW optimizer, an LR scheduler stepped every step, fp16 autocast
with a GradScaler, dropout in the model, python random in the loop, and batches from a DataLoader
whose shuffling sampler knows how far into the epoch it is (it has state_dict() and
load_state_dict()). After a restart load(path, ...) gets freshly built model, optimizer,
scheduler, scaler and sampler and a reseeded process, and the run must continue exactly as if it
had never stopped: the same losses, the same batches. Run
`drill exercise check full-state-checkpoint`."""

import torch
from torch import nn
from torch.utils.data import Sampler


def save(
    path: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    scaler: torch.amp.GradScaler,
    sampler: Sampler[int],
) -> None:
    torch.save({"model": model.state_dict()}, path)  # TODO: is the model all there is?


def load(
    path: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    scaler: torch.amp.GradScaler,
    sampler: Sampler[int],
) -> None:
    state = torch.load(path)
    model.load_state_dict(state["model"])

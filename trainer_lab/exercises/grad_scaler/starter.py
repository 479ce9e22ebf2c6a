"""One mixed-precision training step on CPU: forward under fp16 autocast, loss scaling with
scaler (a torch.amp.GradScaler("cpu")). Run `drill exercise check grad-scaler`."""

import torch
from torch import nn


def train_step(model: nn.Module, optimizer, scaler, x: torch.Tensor, y: torch.Tensor) -> None:
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    loss.backward()
    optimizer.step()

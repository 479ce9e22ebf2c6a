"""Wrong: scales, unscales and updates, but then calls optimizer.step() itself without looking
at the gradients, so the overflow step is applied."""

import torch
from torch import nn


def train_step(model, optimizer, scaler, x, y):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    optimizer.step()
    scaler.update()

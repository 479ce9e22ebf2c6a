"""Wrong: steps and updates through the scaler, but the loss is never scaled
(loss.backward() instead of scaler.scale(loss).backward())."""

import torch
from torch import nn


def train_step(model, optimizer, scaler, x, y):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    loss.backward()
    scaler.step(optimizer)
    scaler.update()

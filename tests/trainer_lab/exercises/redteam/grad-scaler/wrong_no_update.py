# WRONG (class: scaler.update() missing). The overflow step IS skipped by scaler.step, but the
# scale never backs off (nor grows), so every later step overflows again and is skipped forever.
# A good checker must FAIL (scale unchanged after an overflow).
# Modern style: same API, one call short.
import torch
from torch import nn


def train_step(model: nn.Module, optimizer, scaler, x: torch.Tensor, y: torch.Tensor) -> None:
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)

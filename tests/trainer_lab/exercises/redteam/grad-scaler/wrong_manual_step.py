# WRONG (class: bypasses scaler.step). Unscales by hand via unscale_ and then calls optimizer.step()
# directly, followed by scaler.update(): on overflow the inf/NaN gradients are applied to the
# weights (the skip that scaler.step provides is lost). A good checker must FAIL (weights changed /
# non-finite after an overflow step).
# Modern style: explicit unscale_ then plain step.
import torch
from torch import nn


def train_step(model: nn.Module, optimizer, scaler, x: torch.Tensor, y: torch.Tensor) -> None:
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    optimizer.step()
    scaler.update()

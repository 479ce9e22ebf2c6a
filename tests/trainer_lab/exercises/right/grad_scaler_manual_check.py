"""Right, another style: unscale the gradients explicitly, look for inf/NaN by hand and step only
when every gradient is finite; scaler.update() then backs the scale off from what unscale_
recorded."""

import torch
from torch import nn


def train_step(model: nn.Module, optimizer, scaler, x: torch.Tensor, y: torch.Tensor) -> None:
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(x)
    loss = nn.functional.mse_loss(out.float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if all(torch.isfinite(g).all() for g in grads):
        optimizer.step()
    scaler.update()

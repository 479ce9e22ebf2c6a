# RIGHT. Standard GradScaler loop plus an explicit unscale_ (e.g. to clip): scale(loss).backward(),
# unscale_(optimizer), clip_grad_norm_ (inf norm on overflow is harmless), scaler.step (skips the
# step when unscale_ found inf/NaN), scaler.update (backs the scale off).
# Modern style: torch.autocast context + explicit unscale_/clip.
import torch
from torch import nn


def train_step(model: nn.Module, optimizer, scaler, x: torch.Tensor, y: torch.Tensor) -> None:
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1e6)
    scaler.step(optimizer)
    scaler.update()

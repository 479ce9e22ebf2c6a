# WRONG (class: context manager entered too late). Trains all batches in a plain loop and only
# then enters Join "to sync at the end": the rank with fewer batches finishes its loop and sits in
# Join while the other rank is still blocked inside an un-shadowed backward all-reduce... actually
# the join hook only shadows collectives started inside the block, and the longer rank's
# all-reduces are issued outside any Join, so the ranks hang (or desync). A good checker must FAIL
# (timeout/hang).
# Modern style: Join with an empty body.
import torch
from torch import nn
from torch.distributed.algorithms.join import Join


def train_epoch(ddp_model: nn.Module, optimizer: torch.optim.Optimizer, batches: list) -> None:
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(ddp_model(x), y).backward()
        optimizer.step()
    with Join([ddp_model]):
        pass

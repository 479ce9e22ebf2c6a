"""Wrong: Join is used, so nothing hangs and the replicas stay in sync, but the gradients are never
zeroed: each step adds the new gradient to all the earlier ones."""

from torch import nn
from torch.distributed.algorithms.join import Join


def train_epoch(ddp_model, optimizer, batches):
    with Join([ddp_model]):
        for x, y in batches:
            nn.functional.mse_loss(ddp_model(x), y).backward()
            optimizer.step()

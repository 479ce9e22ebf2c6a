"""ZeRO-1. The gradients are already averaged by DDP. Make step() update the parameters like
Adam(lr) would, while each rank keeps Adam's moments only for its share of the parameters.
This version is correct but not sharded. Run `drill exercise check zero1-sharded-optimizer`."""

import torch


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        self.optim = torch.optim.Adam(self.params, lr=lr)

    def zero_grad(self) -> None:
        self.optim.zero_grad()

    def step(self) -> None:
        self.optim.step()

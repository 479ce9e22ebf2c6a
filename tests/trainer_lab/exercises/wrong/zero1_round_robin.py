"""Wrong: sharded and correct, but parameters are dealt out round-robin by index: the big weight
matrices all land on rank 0 and the small biases on rank 1, so rank 0 keeps almost all the
state."""

import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr):
        self.params = list(params)
        rank, world = dist.get_rank(), dist.get_world_size()
        self.owner = [i % world for i in range(len(self.params))]
        mine = [p for p, o in zip(self.params, self.owner, strict=True) if o == rank]
        self.optim = torch.optim.Adam(mine, lr=lr)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        self.optim.step()
        for p, owner in zip(self.params, self.owner, strict=True):
            dist.broadcast(p.data, src=owner)

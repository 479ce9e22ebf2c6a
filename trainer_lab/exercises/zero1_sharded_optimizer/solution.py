"""Each parameter goes to the rank holding the fewest values so far (least-loaded, so the shards
are about equal in size); its owner keeps its Adam state, steps it and broadcasts it."""

import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        rank, world = dist.get_rank(), dist.get_world_size()
        load = [0] * world  # give each parameter to the least-loaded rank: shards of equal size
        self.owner = []
        for p in self.params:
            owner = load.index(min(load))
            load[owner] += p.numel()
            self.owner.append(owner)
        mine = [p for p, o in zip(self.params, self.owner, strict=True) if o == rank]
        self.optim = torch.optim.Adam(mine, lr=lr)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        self.optim.step()
        for p, owner in zip(self.params, self.owner, strict=True):
            dist.broadcast(p.data, src=owner)

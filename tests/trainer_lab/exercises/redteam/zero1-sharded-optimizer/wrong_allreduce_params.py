# WRONG (class: wrong collective to reassemble parameters). Each rank steps only its share (state
# sharded correctly, balanced greedily), then "gathers" the parameters with all_reduce(SUM): every
# parameter is summed over W replicas, so it comes back W x too large (owner's new value +
# non-owners' stale copies). A good checker must FAIL (params do not match Adam).
# Modern style: sorted greedy partition with a Counter of loads.
from collections import Counter

import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        rank, world = dist.get_rank(), dist.get_world_size()
        load = Counter({r: 0 for r in range(world)})
        self.owner = {}
        for p in sorted(self.params, key=lambda t: -t.numel()):
            r = min(range(world), key=lambda k: load[k])
            self.owner[p] = r
            load[r] += p.numel()
        mine = [p for p in self.params if self.owner[p] == rank]
        self.optim = torch.optim.Adam(mine, lr=lr) if mine else None

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        if self.optim is not None:
            self.optim.step()
        for p in self.params:
            dist.all_reduce(p.data)

# WRONG (class: zero_grad only zeroes this rank's share). Sharding and broadcast are right, but
# zero_grad delegates to the sharded Adam, which only knows this rank's params: the other params'
# .grad keep accumulating across steps. DDP then all-reduces a mix of fresh and accumulated grads,
# so from step 2 on the update differs from Adam. A good checker must FAIL (mismatch with Adam
# after >= 2 steps).
# Modern style: greedy partition via sorted + min over a dict.
import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        rank, world = dist.get_rank(), dist.get_world_size()
        load = dict.fromkeys(range(world), 0)
        self.owner = {}
        for p in sorted(self.params, key=lambda t: -t.numel()):
            r = min(load, key=load.__getitem__)
            self.owner[p] = r
            load[r] += p.numel()
        mine = [p for p in self.params if self.owner[p] == rank]
        self.optim = torch.optim.Adam(mine, lr=lr) if mine else None

    def zero_grad(self) -> None:
        if self.optim is not None:
            self.optim.zero_grad()

    @torch.no_grad()
    def step(self) -> None:
        if self.optim is not None:
            self.optim.step()
        for p in self.params:
            dist.broadcast(p.data, src=self.owner[p])

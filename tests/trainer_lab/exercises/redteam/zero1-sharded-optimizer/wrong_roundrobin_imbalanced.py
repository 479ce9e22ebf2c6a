# WRONG (class: sharding by parameter COUNT instead of by number of values). Parameter i goes to
# rank i % W. For a stack of Linear layers the parameter list alternates weight, bias, weight,
# bias..., so with W=2 rank 0 owns every weight matrix and rank 1 only the biases: ~all of the
# Adam state on one rank. Numerically correct. A good checker must FAIL on balance (>3/4 on a rank)
# for any model whose parameter list alternates big/small.
# Modern style: slicing params[rank::world].
import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        self.world, rank = dist.get_world_size(), dist.get_rank()
        mine = self.params[rank::self.world]
        self.optim = torch.optim.Adam(mine, lr=lr) if mine else None

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        if self.optim is not None:
            self.optim.step()
        for i, p in enumerate(self.params):
            dist.broadcast(p.data, src=i % self.world)

# WRONG (class: optimizer state kept whole on every rank). Looks like ZeRO (parameters have owners
# and are broadcast from them) but every rank builds Adam over ALL parameters and steps it, so each
# rank holds the full Adam state -- no memory saved. Numerically identical to Adam.
# A good checker must FAIL (state not sharded: 100% of the moments on every rank).
# Modern style: round-robin ownership with itertools.cycle.
import itertools

import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        self.owner = [r for r, _ in zip(itertools.cycle(range(dist.get_world_size())), self.params)]
        self.optim = torch.optim.Adam(self.params, lr=lr)

    def zero_grad(self) -> None:
        self.optim.zero_grad()

    @torch.no_grad()
    def step(self) -> None:
        self.optim.step()
        for p, r in zip(self.params, self.owner):
            dist.broadcast(p.data, src=r)

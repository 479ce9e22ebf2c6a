"""Right, another style: a hand-written Adam (no torch.optim). Parameters are sorted by size and
each goes to the least-loaded rank; the owner keeps the moments and steps it, then all_gather
of every rank's flattened share gives everyone the update."""

import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        load = [0] * self.world
        self.owner: dict[int, int] = {}
        for i in sorted(range(len(self.params)), key=lambda i: -self.params[i].numel()):
            r = load.index(min(load))
            load[r] += self.params[i].numel()
            self.owner[i] = r
        self.mine = [i for i in range(len(self.params)) if self.owner[i] == self.rank]
        self.m = {i: torch.zeros_like(self.params[i]) for i in self.mine}
        self.v = {i: torch.zeros_like(self.params[i]) for i in self.mine}
        self.t = 0
        self.size = max(load)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        for i in self.mine:
            p, g = self.params[i], self.params[i].grad
            self.m[i].mul_(b1).add_(g, alpha=1 - b1)
            self.v[i].mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (self.v[i] / (1 - b2**self.t)).sqrt_().add_(self.eps)
            p.addcdiv_(self.m[i], denom, value=-self.lr / (1 - b1**self.t))
        share = torch.zeros(self.size)
        flat = torch.cat([self.params[i].reshape(-1) for i in self.mine])
        share[: flat.numel()] = flat
        shares = [torch.zeros(self.size) for _ in range(self.world)]
        dist.all_gather(shares, share)
        for r in range(self.world):
            at = 0
            for i in (i for i in range(len(self.params)) if self.owner[i] == r):
                n = self.params[i].numel()
                self.params[i].copy_(shares[r][at : at + n].view_as(self.params[i]))
                at += n

"""Right, another style: a hand-written Adam whose moments live in a module-level dict, not on
the optimizer object; each parameter is stepped by its least-loaded owner and broadcast from it."""

import torch
import torch.distributed as dist

_MOMENTS = {}


class ShardedAdam:
    def __init__(self, params, lr):
        self.params = list(params)
        rank, world = dist.get_rank(), dist.get_world_size()
        load = [0] * world
        self.owner = []
        for p in self.params:
            o = load.index(min(load))
            load[o] += p.numel()
            self.owner.append(o)
        self.lr, self.t, self.rank = lr, 0, rank

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        self.t += 1
        for i, (p, o) in enumerate(zip(self.params, self.owner, strict=True)):
            if o == self.rank:
                m, v = _MOMENTS.setdefault(i, (torch.zeros_like(p), torch.zeros_like(p)))
                m.mul_(0.9).add_(p.grad, alpha=0.1)
                v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                denom = (v / (1 - 0.999**self.t)).sqrt_().add_(1e-8)
                p.addcdiv_(m, denom, value=-self.lr / (1 - 0.9**self.t))
            dist.broadcast(p, src=o)

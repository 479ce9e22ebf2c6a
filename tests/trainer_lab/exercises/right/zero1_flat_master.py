"""Right, another style (DeepSpeed's ZeRO-1 layout): the parameters are flattened into one
buffer padded to a multiple of the world size; each rank keeps an fp32 master copy of its
contiguous shard plus the Adam moments of that shard, steps the master shard, and all_gather's
the shards back into every parameter. The master shard is a copy of parameters, not Adam state."""

import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        total = sum(p.numel() for p in self.params)
        self.shard = -(-total // self.world)
        start = self.rank * self.shard
        flat = self._flat([p.detach() for p in self.params])
        self.master = flat[start : start + self.shard].clone()
        self.exp_avg = torch.zeros_like(self.master)
        self.exp_avg_sq = torch.zeros_like(self.master)
        self.t = 0

    def _flat(self, tensors: list[torch.Tensor]) -> torch.Tensor:
        flat = torch.zeros(self.shard * self.world)
        at = 0
        for t in tensors:
            flat[at : at + t.numel()] = t.reshape(-1)
            at += t.numel()
        return flat

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        start = self.rank * self.shard
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
        g = self._flat(grads)[start : start + self.shard]
        self.exp_avg.mul_(b1).add_(g, alpha=1 - b1)
        self.exp_avg_sq.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = (self.exp_avg_sq / (1 - b2**self.t)).sqrt_().add_(self.eps)
        self.master.addcdiv_(self.exp_avg, denom, value=-self.lr / (1 - b1**self.t))
        shards = [torch.empty(self.shard) for _ in range(self.world)]
        dist.all_gather(shards, self.master)
        flat, at = torch.cat(shards), 0
        for p in self.params:
            p.copy_(flat[at : at + p.numel()].view_as(p))
            at += p.numel()

# RIGHT. ZeRO-1 the way DeepSpeed lays it out: all parameters viewed as one flat vector, padded to
# a multiple of W, rank r owns the contiguous slice [r*s, (r+1)*s) -- even by construction, even
# when one tensor is huge, since tensors may be split across ranks. Each rank keeps Adam's
# exp_avg / exp_avg_sq ONLY for its slice (plain tensors of size s) and does the Adam math by hand
# (bias correction, eps 1e-8, betas 0.9/0.999), then all_gather_into_tensor reassembles the
# updated flat vector and every parameter is copied back.
# Modern style: hand-written flat sharding, all_gather_into_tensor, dataclass for hyper-params.
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class _Hyper:
    lr: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        self.h = _Hyper(lr)
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.numel = sum(p.numel() for p in self.params)
        self.shard = -(-self.numel // self.world)
        self.lo = self.rank * self.shard
        self.hi = min(self.lo + self.shard, self.numel)
        n = max(self.hi - self.lo, 0)
        dtype = self.params[0].dtype
        self.exp_avg = torch.zeros(n, dtype=dtype)
        self.exp_avg_sq = torch.zeros(n, dtype=dtype)
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def _flat(self, tensors) -> torch.Tensor:
        flat = torch.cat([t.reshape(-1) for t in tensors])
        return torch.nn.functional.pad(flat, (0, self.shard * self.world - self.numel))

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        h = self.h
        flat_p = self._flat([p.detach() for p in self.params])
        flat_g = self._flat([p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params])
        mine = slice(self.rank * self.shard, (self.rank + 1) * self.shard)
        n = self.exp_avg.numel()
        p_s, g_s = flat_p[mine][:n].clone(), flat_g[mine][:n]
        self.exp_avg.mul_(h.beta1).add_(g_s, alpha=1 - h.beta1)
        self.exp_avg_sq.mul_(h.beta2).addcmul_(g_s, g_s, value=1 - h.beta2)
        bc1 = 1 - h.beta1**self.t
        bc2 = 1 - h.beta2**self.t
        denom = (self.exp_avg_sq.sqrt() / (bc2**0.5)).add_(h.eps)
        p_s.addcdiv_(self.exp_avg, denom, value=-h.lr / bc1)
        out_shard = flat_p[mine].clone()
        out_shard[:n] = p_s
        gathered = torch.empty(self.shard * self.world, dtype=flat_p.dtype)
        dist.all_gather_into_tensor(gathered, out_shard)
        off = 0
        for p in self.params:
            p.copy_(gathered[off : off + p.numel()].view_as(p))
            off += p.numel()

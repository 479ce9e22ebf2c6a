# RIGHT. Static DDP-style buckets (reverse parameter order, <= bucket_bytes); when a bucket's last
# gradient arrives the hook launches an async all_reduce and chains the averaging + copy-back as
# a torch.futures callback (work.get_future().then(...)), the way DDP comm hooks do. wait()
# launches buckets that never completed, then waits all futures.
# Modern style: torch.futures chaining (comm-hook style), itertools.groupby-free list building.
import torch
import torch.distributed as dist
from torch import nn


class BucketedAllReduce:
    def __init__(self, model: nn.Module, bucket_bytes: int) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.bucket_bytes = bucket_bytes
        self.buckets: list[list[torch.Tensor]] = []
        cur, used = [], 0
        for p in reversed(self.params):
            size = p.numel() * p.element_size()
            if cur and used + size > bucket_bytes:
                self.buckets.append(cur)
                cur, used = [], 0
            cur.append(p)
            used += size
        if cur:
            self.buckets.append(cur)
        self.where = {id(p): b for b, ps in enumerate(self.buckets) for p in ps}
        self.seen = [0] * len(self.buckets)
        self.futs: dict[int, torch.futures.Future] = {}
        for p in self.params:
            p.register_post_accumulate_grad_hook(self._hook)

    def _launch(self, b: int) -> None:
        grads = [p.grad for p in self.buckets[b] if p.grad is not None]
        if not grads:
            return
        flat = torch.cat([g.reshape(-1) for g in grads])
        world = dist.get_world_size()

        def finish(fut: torch.futures.Future) -> None:
            out = fut.value()[0] / world
            for g, piece in zip(grads, out.split([g.numel() for g in grads])):
                g.copy_(piece.view_as(g))

        self.futs[b] = dist.all_reduce(flat, async_op=True).get_future().then(finish)

    def _hook(self, p: torch.Tensor) -> None:
        b = self.where[id(p)]
        self.seen[b] += 1
        if self.seen[b] == len(self.buckets[b]):
            self._launch(b)

    def wait(self) -> None:
        for b, n in enumerate(self.seen):
            if n and b not in self.futs:
                self._launch(b)
        torch.futures.wait_all(list(self.futs.values()))
        self.futs.clear()
        self.seen = [0] * len(self.buckets)

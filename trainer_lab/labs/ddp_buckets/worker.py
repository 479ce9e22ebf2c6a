"""ddp-buckets worker (imports torch): count DDP's gradient buckets per iteration with a comm hook.

Each mode builds a fresh DDP over the same stack of Linear layers. A comm hook records every
bucket it is handed (size, which layers' gradients it holds, and how many of the model's
gradients were ready when it was launched, counted by post-accumulate-grad hooks that run before
DDP's own hook for the same gradient). A bucket launched before the last gradient was ready
overlaps the rest of backward.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from trainer_lab.train.worker import WorkerContext


def build_stack(layers: int, width: int) -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)])


def count_buckets(
    ctx: WorkerContext, spec: dict[str, Any], find_unused: bool
) -> list[list[dict[str, Any]]]:
    """Run spec["iterations"] forward/backward/step iterations; per iteration, one record per
    bucket in launch order."""
    width, iterations = spec["width"], spec["iterations"]
    model = build_stack(spec["layers"], width).to(ctx.device)
    layer_of = {id(p): i for i, layer in enumerate(model) for p in layer.parameters()}
    total = len(layer_of)
    ready = [0]

    def mark_ready(_param: torch.Tensor) -> None:
        ready[0] += 1

    for param in model.parameters():
        param.register_post_accumulate_grad_hook(mark_ready)
    ddp = DistributedDataParallel(
        model, bucket_cap_mb=spec["bucket_cap_mb"], find_unused_parameters=find_unused
    )
    launched: list[dict[str, Any]] = []

    # no annotations: DDP checks a hook's annotations as objects, and this module's are strings
    def record_and_average(_state, bucket):
        layers = sorted({layer_of[id(p)] for p in bucket.parameters()})
        launched.append(
            {"numel": bucket.buffer().numel(), "layers": layers, "ready": ready[0], "of": total}
        )
        work = dist.all_reduce(bucket.buffer(), async_op=True)
        world = dist.get_world_size()
        return work.get_future().then(lambda fut: fut.value()[0].div_(world))

    ddp.register_comm_hook(None, record_and_average)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(ctx.rank)
    per_iteration: list[list[dict[str, Any]]] = []
    for _ in range(iterations):
        launched.clear()
        ready[0] = 0
        x = torch.randn(4, width, generator=generator).to(ctx.device)
        ddp(x).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        per_iteration.append(list(launched))
    return per_iteration


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    modes = {
        name: count_buckets(ctx, spec, find_unused) for name, find_unused in spec["modes"].items()
    }
    if ctx.rank == 0:
        ctx.events().write("ddp_buckets", modes=modes)
    dist.barrier()

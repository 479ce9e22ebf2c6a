"""grad-accum worker (imports torch): K micro-batches with no_sync vs one large batch.

Three DDP replicas of the same model train in lockstep on the same samples each step:
- `big`: one batch of K*b samples per rank.
- `accum`: K micro-batches of b, loss / K, `no_sync()` on the first K-1 (gradients accumulate
  locally; the all-reduce runs once, in the last backward).
- `naive`: the same accumulation without `no_sync()` (an all-reduce in every backward).
A communication hook counts the bucket all-reduces each replica issues.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import SyntheticDataset
from trainer_lab.train.model import build_model, loss_fn
from trainer_lab.train.trainer import seed_everything
from trainer_lab.train.worker import WorkerContext


def counting_hook(state, bucket):
    # Left unannotated on purpose: DDP inspects the hook's annotations and, with postponed
    # annotations (strings), rejects `bucket: dist.GradBucket`.
    state["allreduces"] += 1
    return allreduce_hook(None, bucket)  # None: the default process group


class Replica:
    def __init__(self, cfg: TrainConfig, device: torch.device, bucket_cap_mb: float) -> None:
        seed_everything(cfg.seed)
        self.module = build_model(cfg).to(device)
        self.ddp = DDP(self.module, bucket_cap_mb=bucket_cap_mb)
        self.counter = {"allreduces": 0}
        self.ddp.register_comm_hook(self.counter, counting_hook)
        self.optimizer = torch.optim.SGD(self.module.parameters(), lr=cfg.lr, momentum=0.9)

    def grads(self) -> torch.Tensor:
        return torch.cat([p.grad.reshape(-1) for p in self.module.parameters()])

    def weights(self) -> torch.Tensor:
        return torch.cat([p.detach().reshape(-1) for p in self.module.parameters()])


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    k, micro = spec["micro_batches"], spec["micro_batch"]
    sabotage = spec["sabotage"]
    data = SyntheticDataset(cfg)
    names = ("big", "accum", "naive")
    replicas = {n: Replica(cfg, ctx.device, spec["bucket_cap_mb"]) for n in names}
    per_rank = k * micro
    events = ctx.events()
    for step in range(1, cfg.steps + 1):
        start = ((step - 1) * ctx.world_size + ctx.rank) * per_rank % (len(data) - per_rank)
        x, y = data.x[start : start + per_rank], data.y[start : start + per_rank]
        before = {n: r.counter["allreduces"] for n, r in replicas.items()}
        losses = {}
        for name, rep in replicas.items():
            rep.optimizer.zero_grad(set_to_none=True)
            if name == "big":
                loss = loss_fn(cfg, rep.ddp(x), y)
                loss.backward()
                losses[name] = loss.item()
                continue
            total = 0.0
            for i in range(k):
                xs, ys = x[i * micro : (i + 1) * micro], y[i * micro : (i + 1) * micro]
                skip_sync = name == "accum" and i < k - 1 and sabotage != "sync_every_micro"
                with rep.ddp.no_sync() if skip_sync else nullcontext():
                    loss = loss_fn(cfg, rep.ddp(xs), ys)
                    if sabotage != "no_loss_scale":
                        loss = loss / k  # the mean over K*b samples, like the big batch
                    loss.backward()
                total += loss.item()
            losses[name] = total
        ref = replicas["big"].grads()
        scale = ref.abs().max().item()
        diffs = {n: (replicas[n].grads() - ref).abs().max().item() / scale for n in names[1:]}
        for rep in replicas.values():
            rep.optimizer.step()
        wref = replicas["big"].weights()
        wdiffs = {n: (replicas[n].weights() - wref).abs().max().item() for n in names[1:]}
        events.write(
            "accum_step",
            step=step,
            losses=losses,
            allreduces={n: r.counter["allreduces"] - before[n] for n, r in replicas.items()},
            rel_grad_diff=diffs,
            weight_diff=wdiffs,
        )
    dist.barrier()
    ctx.log(f"grad-accum done: {cfg.steps} steps, K={k}")

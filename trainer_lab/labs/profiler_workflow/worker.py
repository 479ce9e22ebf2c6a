"""profiler-workflow worker (imports torch): profile a step with planted problems; read it."""

from __future__ import annotations

import random
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from trainer_lab.train.worker import WorkerContext

DIM, BATCH, SORTED = 64, 32, 50_000
WAIT, WARMUP, ACTIVE = 1, 1, 3


def build_batch(fast: bool, rng: random.Random, gen: torch.Generator) -> torch.Tensor:
    if fast:
        return torch.randn(BATCH, DIM, generator=gen)
    rows = [[rng.gauss(0.0, 1.0) for _ in range(DIM)] for _ in range(BATCH * 16)]  # Python, no ops
    return torch.tensor(rows[:BATCH])


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    sabotage = spec["sabotage"]
    model = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    rng, gen = random.Random(0), torch.Generator().manual_seed(0)
    noise = torch.randn(SORTED, generator=gen)
    logged: list[Any] = []
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE),
    ) as prof:
        for _ in range(WAIT + WARMUP + ACTIVE):
            with record_function("data"):
                x = build_batch(sabotage == "fast_loader", rng, gen)
            for _micro in range(spec["micro_steps"]):
                with record_function("forward_backward"):
                    loss = model(x).pow(2).mean()
                    if sabotage != "no_slow_op":
                        loss = loss + 1e-6 * noise.sort().values[:10].sum()
                    loss.backward()
                logged.append(loss.detach() if sabotage == "no_item" else loss.item())
            with record_function("optimizer"):
                opt.step()
                opt.zero_grad()
            prof.step()
    per_op: dict[str, float] = {}
    for avg in prof.key_averages():
        if avg.key.startswith("aten::"):
            per_op[avg.key] = per_op.get(avg.key, 0.0) + avg.self_cpu_time_total
    events = prof.events()
    steps = [e for e in events if e.name.startswith("ProfilerStep")]
    data = [e for e in events if e.name == "data"]
    # operators called straight from the data phase (their own children are inside them)
    data_ops = [
        e
        for e in events
        if e.name.startswith("aten::") and e.cpu_parent is not None and e.cpu_parent.name == "data"
    ]
    report = {
        "self_us": per_op,
        "items": sum(1 for e in events if e.name == "aten::item"),
        "steps": len(steps),
        "step_us": sum(e.cpu_time_total for e in steps),
        "data_us": sum(e.cpu_time_total for e in data),
        "data_ops_us": sum(e.cpu_time_total for e in data_ops),
    }
    if dist.is_initialized():
        dist.barrier()
    if ctx.rank == 0:
        ctx.events().write("profiler_workflow", **report)

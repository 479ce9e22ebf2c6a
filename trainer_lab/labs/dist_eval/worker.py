"""dist-eval worker (imports torch): evaluate one fixed classifier four ways."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch.utils.data import DistributedSampler

from trainer_lab.labs.dist_eval import METHODS
from trainer_lab.train.worker import WorkerContext

FEATURES, CLASSES = 6, 3


def evaluation_set(n: int) -> tuple[torch.Tensor, torch.Tensor, torch.nn.Module]:
    gen = torch.Generator().manual_seed(0)
    model = torch.nn.Linear(FEATURES, CLASSES)
    with torch.no_grad():
        model.weight.copy_(torch.randn(CLASSES, FEATURES, generator=gen))
        model.bias.zero_()
        x = torch.randn(n, FEATURES, generator=gen)
        labels = model(x).argmax(1)
        # the model is wrong on a third of the samples, more often early in the set
        wrong = torch.rand(n, generator=gen) < torch.linspace(0.6, 0.1, n)
        labels[wrong] = (labels[wrong] + 1) % CLASSES
    return x, labels, model


def correct(
    model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, ids: list[int]
) -> torch.Tensor:
    with torch.no_grad():
        return (model(x[ids]).argmax(1) == y[ids]).long()


def summed(hits: torch.Tensor) -> tuple[float, int]:
    totals = torch.tensor([int(hits.sum()), hits.numel()], dtype=torch.float64)
    dist.all_reduce(totals)
    return float(totals[0] / totals[1]), int(totals[1])


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    rank, world = ctx.rank, ctx.world_size
    n = spec["per_rank"] * world + (0 if spec["sabotage"] == "divisible" else 1)
    x, y, model = evaluation_set(n)
    padded_ids = list(DistributedSampler(range(n), world, rank, shuffle=False))
    shard_ids = list(range(rank, n, world))
    results: dict[str, dict[str, Any]] = {}

    hits = correct(model, x, y, padded_ids)
    acc, counted = summed(hits)
    results["padded"] = {"accuracy": acc, "counted": counted, "mine": len(padded_ids)}

    hits = correct(model, x, y, shard_ids)
    mean = torch.tensor([float(hits.float().mean())], dtype=torch.float64)
    dist.all_reduce(mean)
    results["mean_of_means"] = {
        "accuracy": float(mean) / world,
        "counted": n,
        "mine": len(shard_ids),
    }

    exact_ids = padded_ids if spec["sabotage"] == "exact_with_sampler" else shard_ids
    acc, counted = summed(correct(model, x, y, exact_ids))
    results["exact"] = {"accuracy": acc, "counted": counted, "mine": len(exact_ids)}

    pairs = list(zip(padded_ids, correct(model, x, y, padded_ids).tolist(), strict=True))
    gathered: list[Any] = [None] * world
    dist.all_gather_object(gathered, pairs)
    every = [pair for part in gathered for pair in part]
    kept = every if spec["sabotage"] == "no_dedup" else list(dict(every).items())
    results["dedup"] = {
        "accuracy": sum(hit for _, hit in kept) / len(kept),
        "counted": len(kept),
        "mine": len(padded_ids),
    }
    per_rank: list[Any] = [None] * world
    dist.all_gather_object(per_rank, {m: results[m]["mine"] for m in METHODS})
    if rank == 0:
        reference = int(correct(model, x, y, list(range(n))).sum()) / n
        ctx.events().write(
            "dist_eval", n=n, reference=reference, results=results, per_rank=per_rank
        )

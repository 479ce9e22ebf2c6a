"""iterable-shard worker (imports torch): read a stream of ids through DataLoader workers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from trainer_lab.labs.iterable_shard import VARIANTS
from trainer_lab.train.worker import WorkerContext


class IdStream(IterableDataset):
    """Yields (id, rank, worker) for the ids of `samples` this reader is responsible for."""

    def __init__(self, samples: int, rank: int, world: int, split: str) -> None:
        self.samples, self.rank, self.world, self.split = samples, rank, world, split

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        if self.split == "naive":
            start, step = 0, 1
        elif self.split == "rank_only":
            start, step = self.rank, self.world
        else:  # one global reader index per (rank, worker)
            start, step = self.rank * workers + worker, self.world * workers
        for sample in range(start, self.samples, step):
            yield sample, self.rank, worker


def read_all(spec: dict[str, Any], ctx: WorkerContext, variant: str) -> list[tuple[int, int]]:
    split = "rank_only" if variant == "fixed" and spec["sabotage"] == "no_worker_split" else variant
    workers = 0 if spec["sabotage"] == "in_process" else spec["num_workers"]
    stream = IdStream(spec["samples"], ctx.rank, ctx.world_size, split)
    loader = DataLoader(stream, batch_size=4, num_workers=workers)
    seen = []
    for ids, ranks, worker_ids in loader:
        seen.extend(zip(ids.tolist(), worker_ids.tolist(), strict=True))
        assert set(ranks.tolist()) == {ctx.rank}
    return seen


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    mine = {variant: read_all(spec, ctx, variant) for variant in VARIANTS}
    per_rank: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(per_rank, mine)
    if ctx.rank == 0:
        ctx.events().write("iterable_shard", per_rank=per_rank)

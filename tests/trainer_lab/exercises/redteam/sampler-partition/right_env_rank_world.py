# Kept as a RIGHT answer (was wrong_gaming_env_world.py): under torchrun, RANK and WORLD_SIZE
# are the process group's rank and size (init_process_group reads them), so this split is the
# same as DistributedSampler's default; only a launcher that does not export them differs.
# WRONG / GAMING (class: reads the grader's environment instead of the process group). Takes the
# rank/world from os.environ RANK/WORLD_SIZE with defaults 0/1 ("works under torchrun"); under a
# launcher that initialises the group without exporting those variables (mp.spawn, a test
# harness, init_process_group(rank=..., world_size=...)) every rank believes it is rank 0 of 1 and
# yields the whole dataset. A good checker must FAIL unless it happens to export RANK/WORLD_SIZE
# (in which case it cannot see this, and the answer is acceptable on torchrun).
# Modern style: os.environ.get with int defaults; DistributedSampler with explicit num_replicas.
import os
from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(dataset: Dataset, epoch: int, batch_size: int, loader_state: dict) -> Iterator[torch.Tensor]:
    if "loader" not in loader_state:
        rank = int(os.environ.get("RANK", 0))
        world = int(os.environ.get("WORLD_SIZE", 1))
        s = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True)
        loader_state["loader"] = DataLoader(dataset, batch_size=batch_size, sampler=s)
    loader_state["loader"].sampler.set_epoch(epoch)
    yield from loader_state["loader"]

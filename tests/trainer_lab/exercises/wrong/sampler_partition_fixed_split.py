"""Wrong: the ids are dealt to the ranks once (every W-th id from the rank's offset) and only
shuffled within each rank's slice per epoch: the order changes, but a rank sees the same ids in
every epoch, so the ranks never mix."""

from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch.utils.data import Dataset


def epoch_batches(
    dataset: Dataset, epoch: int, batch_size: int, loader_state: dict
) -> Iterator[torch.Tensor]:
    world, rank = dist.get_world_size(), dist.get_rank()
    ids = list(range(len(dataset)))  # type: ignore[arg-type]
    ids += ids[: (-len(ids)) % world]
    mine = ids[rank::world]
    g = torch.Generator().manual_seed(epoch)
    mine = [mine[i] for i in torch.randperm(len(mine), generator=g).tolist()]
    for start in range(0, len(mine), batch_size):
        yield torch.stack([torch.as_tensor(dataset[i]) for i in mine[start : start + batch_size]])

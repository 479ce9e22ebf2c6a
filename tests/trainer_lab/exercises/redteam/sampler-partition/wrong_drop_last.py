# WRONG (class: truncation instead of padding). DistributedSampler(drop_last=True) with set_epoch:
# each rank gets floor(N/W) ids and the N mod W leftovers are dropped every epoch. The brief asks
# for drop_last=False semantics (ceil, pad, no id dropped). A good checker must FAIL when N % W != 0.
# Modern style: keyword-only construction, set_epoch each call.
from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(dataset: Dataset, epoch: int, batch_size: int, loader_state: dict) -> Iterator[torch.Tensor]:
    if "loader" not in loader_state:
        s = DistributedSampler(dataset, shuffle=True, drop_last=True)
        loader_state["loader"] = DataLoader(dataset, batch_size=batch_size, sampler=s)
    loader_state["loader"].sampler.set_epoch(epoch)
    yield from loader_state["loader"]

"""Wrong: every id exactly once (a shared permutation, rank::world_size), but with no padding
the ranks get different numbers of ids, so they would run different numbers of steps."""

import torch
import torch.distributed as dist


def epoch_batches(dataset, epoch, batch_size, loader_state):
    g = torch.Generator().manual_seed(epoch)
    order = torch.randperm(len(dataset), generator=g)
    mine = order[dist.get_rank() :: dist.get_world_size()]
    for start in range(0, len(mine), batch_size):
        yield torch.stack([dataset[int(i)] for i in mine[start : start + batch_size]])

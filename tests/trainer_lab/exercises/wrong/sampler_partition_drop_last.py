"""Wrong: DistributedSampler with drop_last=True: the N % W leftover ids are never seen."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(dataset, epoch, batch_size, loader_state):
    if "loader" not in loader_state:
        sampler = DistributedSampler(dataset, shuffle=True, seed=0, drop_last=True)
        loader_state["sampler"] = sampler
        loader_state["loader"] = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    loader_state["sampler"].set_epoch(epoch)
    yield from loader_state["loader"]

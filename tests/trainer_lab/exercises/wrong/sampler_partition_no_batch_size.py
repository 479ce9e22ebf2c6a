"""Wrong: the right sampler and set_epoch, but the DataLoader is built without batch_size, so it
yields batches of one id: the right ids, the wrong batches."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(dataset, epoch, batch_size, loader_state):
    if "loader" not in loader_state:
        sampler = DistributedSampler(dataset, shuffle=True, seed=0)
        loader_state["sampler"] = sampler
        loader_state["loader"] = DataLoader(dataset, sampler=sampler)
    loader_state["sampler"].set_epoch(epoch)
    yield from loader_state["loader"]

"""Wrong: a DistributedSampler, but set_epoch is never called (every epoch repeats epoch 0)."""

from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def epoch_batches(dataset, epoch, batch_size, loader_state):
    if "loader" not in loader_state:
        sampler = DistributedSampler(dataset, shuffle=True, seed=0)
        loader_state["loader"] = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    yield from loader_state["loader"]

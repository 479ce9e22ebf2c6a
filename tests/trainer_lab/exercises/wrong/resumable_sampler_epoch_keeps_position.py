"""Wrong: resumes mid-epoch correctly, but set_epoch does not reset the count of samples handed
out, so a loader that lives on starts the next epoch where the last one stopped."""

from torch.utils.data import DataLoader, Subset
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset, batch_size, seed=0):
        self.dataset, self.batch_size = dataset, batch_size
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
        self.epoch, self.consumed = 0, 0

    def set_epoch(self, epoch):
        self.epoch = epoch
        self.sampler.set_epoch(epoch)

    def __iter__(self):
        remaining = list(self.sampler)[self.consumed :]
        for batch in DataLoader(Subset(self.dataset, remaining), batch_size=self.batch_size):
            self.consumed += len(batch)
            yield batch

    def state_dict(self):
        return {"epoch": self.epoch, "consumed": self.consumed}

    def load_state_dict(self, state):
        self.set_epoch(state["epoch"])
        self.consumed = state["consumed"]

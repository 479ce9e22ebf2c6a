"""Wrong: counts a batch as consumed only when the next one is requested, so the saved position
is one batch behind and the resumed loader replays the last batch it gave."""

from torch.utils.data import DataLoader, Subset
from torch.utils.data.distributed import DistributedSampler


class ResumableLoader:
    def __init__(self, dataset, batch_size, seed=0):
        self.dataset, self.batch_size = dataset, batch_size
        self.sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
        self.epoch, self.consumed = 0, 0

    def set_epoch(self, epoch):
        self.epoch, self.consumed = epoch, 0
        self.sampler.set_epoch(epoch)

    def __iter__(self):
        remaining = list(self.sampler)[self.consumed :]
        last = 0
        for batch in DataLoader(Subset(self.dataset, remaining), batch_size=self.batch_size):
            self.consumed += last
            last = len(batch)
            yield batch
        self.consumed += last

    def state_dict(self):
        return {"epoch": self.epoch, "consumed": self.consumed}

    def load_state_dict(self, state):
        self.set_epoch(state["epoch"])
        self.consumed = state["consumed"]

# RIGHT. Hand-written sharding equal to DistributedSampler(shuffle=True, drop_last=False):
# torch.Generator seeded with seed + epoch, randperm(N), pad by repeating the head up to a multiple
# of W, take indices[rank::W]. The position is kept in SAMPLES consumed (valid even if a restored
# loader uses another batch size), bumped
# before each yield. Rank/world come from torch.distributed when it is initialised.
# Modern style: dataclass state + dataclasses.asdict, math.ceil padding, torch.Generator.
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import torch
import torch.distributed as dist
from torch.utils.data import Dataset, default_collate


@dataclass
class _State:
    epoch: int = 0
    consumed: int = 0


class ResumableLoader:
    def __init__(self, dataset: Dataset, batch_size: int, seed: int = 0) -> None:
        self.dataset, self.batch_size, self.seed = dataset, batch_size, seed
        ready = dist.is_available() and dist.is_initialized()
        self.rank = dist.get_rank() if ready else 0
        self.world = dist.get_world_size() if ready else 1
        self.state = _State()

    def set_epoch(self, epoch: int) -> None:
        self.state = _State(epoch=epoch)

    def _shard(self) -> list[int]:
        n = len(self.dataset)
        g = torch.Generator()
        g.manual_seed(self.seed + self.state.epoch)
        order = torch.randperm(n, generator=g).tolist()
        total = math.ceil(n / self.world) * self.world
        while len(order) < total:
            order += order[: total - len(order)]
        return order[self.rank : total : self.world]

    def __iter__(self) -> Iterator[torch.Tensor]:
        shard = self._shard()
        while self.state.consumed < len(shard):
            ids = shard[self.state.consumed : self.state.consumed + self.batch_size]
            self.state.consumed += len(ids)
            yield default_collate([self.dataset[i] for i in ids])

    def state_dict(self) -> dict:
        return asdict(self.state)

    def load_state_dict(self, state: dict) -> None:
        self.state = _State(**state)

# RIGHT. torch's own ZeroRedundancyOptimizer wrapping Adam: it partitions the parameters across
# ranks (greedy by size), each rank keeps Adam state only for its partition, steps it, and
# broadcasts the updated parameters. The brief explicitly allows it.
# Modern style: composition over the library primitive, property passthrough.
import torch
from torch.distributed.optim import ZeroRedundancyOptimizer


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        self.optim = ZeroRedundancyOptimizer(self.params, optimizer_class=torch.optim.Adam, lr=lr)

    def zero_grad(self) -> None:
        self.optim.zero_grad(set_to_none=True)

    def step(self) -> None:
        self.optim.step()

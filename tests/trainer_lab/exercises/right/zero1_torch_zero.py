"""Right, another style: torch's own ZeroRedundancyOptimizer around Adam (it shards the state by
size and broadcasts the updated parameters itself)."""

import torch
from torch.distributed.optim import ZeroRedundancyOptimizer


class ShardedAdam(ZeroRedundancyOptimizer):
    def __init__(self, params, lr: float) -> None:
        super().__init__(params, optimizer_class=torch.optim.Adam, lr=lr)

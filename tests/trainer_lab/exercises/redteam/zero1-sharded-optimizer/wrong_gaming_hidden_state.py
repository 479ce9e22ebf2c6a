# WRONG / GAMING (class: hides the full state from the inspector). Each rank's torch.optim.Adam
# is built over its share only (so optim.state looks sharded), but a second, full Adam over ALL
# parameters is stored under a private, name-mangled attribute and is the one actually stepped;
# the per-share Adam is a decoy. Full Adam state lives on every rank. A good checker must FAIL
# (e.g. by measuring the tensors reachable from the object / memory, not just .optim.state).
# Modern style: name mangling, __slots__-free decoy attribute.
import torch
import torch.distributed as dist


class ShardedAdam:
    def __init__(self, params, lr: float) -> None:
        self.params = list(params)
        rank, world = dist.get_rank(), dist.get_world_size()
        self.optim = torch.optim.Adam(self.params[rank::world] or [torch.zeros(1)], lr=lr)
        self.__real = torch.optim.Adam(self.params, lr=lr)

    def zero_grad(self) -> None:
        self.__real.zero_grad()

    def step(self) -> None:
        self.__real.step()

"""fsdp-per-block: 4 residual MLP blocks and a small head, sharded by the user on a W-rank CPU
mesh; 3 SGD steps on each rank's own data. Forward pre-hooks on the inner Linears count the bytes
of parameters held unsharded (FSDP2 swaps a gathered group's plain tensors in); the reference is
one process on all ranks' data, compared shard by shard (no collectives in the checker)."""

import torch
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError
from trainer_lab.exercises._checker.kit import batches

STEPS, WIDTH, BLOCKS, LR = 3, 32, 4, 0.1


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(WIDTH, 2 * WIDTH)
        self.down = nn.Linear(2 * WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.tanh(self.up(x)))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.head = nn.Linear(WIDTH, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def _local(p: torch.Tensor) -> torch.Tensor:
    return p.to_local() if isinstance(p, DTensor) else p


def _nbytes(p: torch.Tensor) -> int:
    return p.numel() * p.element_size()


@torch.no_grad()
def _sgd(model: nn.Module) -> None:
    # the same plain SGD update for the sharded model and the reference: what is compared is
    # the sharding, not an optimizer's handling of DTensors
    for p in model.parameters():
        p.sub_(LR * p.grad)


def run(ctx: Ctx) -> None:
    fn = ctx.attr("shard")
    w, rank = ctx.world_size, ctx.rank
    data = [batches(500 + r, STEPS, width=WIDTH) for r in range(w)]
    model = Net()
    full = sum(p.numel() for p in model.parameters())
    full_bytes = sum(_nbytes(p) for p in model.parameters())
    block_bytes = sum(_nbytes(p) for p in model.blocks[0].parameters())
    try:
        ctx.call(fn, model, init_device_mesh("cpu", (w,)))
    except UserCodeError as error:
        if not isinstance(model, FSDPModule):
            raise
        raise UserCodeError(
            f"{error}. Likely cause: fully_shard(model) ran before fully_shard on its blocks: "
            "the root's call already put every parameter in the root's group (as DTensors), so "
            "a later fully_shard of a block inside it fails. Shard the blocks first, the root "
            "last"
        ) from error
    held = ctx.gather("held", sum(_local(p).numel() for p in model.parameters()))
    ok = all(h <= 0.6 * full for h in held) and sum(held) >= full
    ctx.check("sharded_at_rest", ok,
              f"local parameter values per rank: {held}, the whole model is {full}"
              + ("" if ok else "; expected about 1/W on each rank. Likely cause: the parameters "
                 "are not sharded (no fully_shard on them)"))  # fmt: skip

    peak = [0]
    readings: list[int] = []  # gathered bytes before each Linear of the first forward

    def before_forward(_module: nn.Module, _args: object) -> None:
        gathered = sum(_nbytes(p) for p in model.parameters() if not isinstance(p, DTensor))
        peak[0] = max(peak[0], gathered)
        if len(readings) < 2 * BLOCKS:
            readings.append(gathered)

    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.register_forward_pre_hook(before_forward)
    losses = []
    for step in range(STEPS):
        model.zero_grad(set_to_none=True)
        x, y = data[rank][step]
        loss = ctx.call(lambda x=x, y=y: nn.functional.mse_loss(model(x), y))
        ctx.call(loss.backward)
        _sgd(model)
        losses.append(float(loss))
    peaks = ctx.gather("peak", peak[0])
    ok = all(p <= block_bytes + 0.25 * full_bytes for p in peaks)
    detail = (
        f"peak gathered parameter bytes in forward per rank: {peaks}; one block is "
        f"{block_bytes}, the whole model {full_bytes}"
    )
    if not ok:
        plain = [n for n, p in model.named_parameters() if not isinstance(p, DTensor)]
        first = readings[0] if readings else 0
        if first > block_bytes + 0.25 * full_bytes:
            cause = (
                f"the whole model is gathered at once, before the first block ({first} bytes): "
                "the blocks have no fully_shard group of their own, only the root"
            )
        elif plain or not isinstance(model, FSDPModule):
            unwrapped = f" ({', '.join(plain)} stay plain)" if plain else ""
            cause = (
                f"each block is gathered on its own, but the gathered bytes grow block by block "
                f"({readings[::2]}): with the root model not wrapped{unwrapped}, every block is "
                "a root group, and a root keeps its parameters gathered until backward, so wrap "
                "the root last (fully_shard(model), not a submodule such as the head)"
            )
        else:
            cause = (
                f"each block is gathered on its own, but stays gathered after its forward: the "
                f"gathered bytes grow block by block ({readings[::2]}). The blocks are not "
                "resharded after forward (reshard_after_forward=False keeps them gathered for "
                "backward)"
            )
        detail += f"; expected at most about one block at a time. Likely cause: {cause}"
    ctx.check("one_block_at_a_time", ok, detail)

    ref = Net()
    ref_losses = []
    for step in range(STEPS):
        ref.zero_grad(set_to_none=True)
        x = torch.cat([d[step][0] for d in data])
        y = torch.cat([d[step][1] for d in data])
        with torch.no_grad():
            ref_losses.append(float(nn.functional.mse_loss(ref(data[rank][step][0]),
                                                           data[rank][step][1])))  # fmt: skip
        nn.functional.mse_loss(ref(x), y).backward()
        _sgd(ref)
    diff, plain = 0.0, []
    for (name, p), q in zip(model.named_parameters(), ref.parameters(), strict=True):
        if isinstance(p, DTensor):
            shards = torch.chunk(q.detach(), w, dim=0)  # fully_shard's dim-0 split
            q = shards[rank] if rank < len(shards) else q.detach()[:0]
        else:
            plain.append(name)
        mine = _local(p).detach()
        diff = max(diff, float((mine - q.reshape(mine.shape)).abs().max()) if mine.numel() else 0)
    loss_diff = max(abs(a - b) for a, b in zip(losses, ref_losses, strict=True))
    ok = diff < 1e-5 and loss_diff < 1e-5
    detail = f"max |param - reference| = {diff:.2e}, max |loss - reference| = {loss_diff:.2e}"
    if not ok and plain:
        detail += (f"; expected below 1e-05. Likely cause: {', '.join(plain)} not sharded by any "
                   "fully_shard group, so their gradients are never averaged across ranks "
                   "(fully_shard the root model too)")  # fmt: skip
    elif not ok:
        detail += "; expected below 1e-05. Likely cause: the sharded step is not the average of "
        detail += "every rank's gradient (a group's gradients are not reduced across the mesh)"
    ctx.check("matches_reference", ok, detail)

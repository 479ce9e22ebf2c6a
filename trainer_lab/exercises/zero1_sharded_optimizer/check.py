"""zero1-sharded-optimizer: 4 DDP steps with the user's optimizer; Adam state is counted in every
torch optimizer the object holds; the reference is plain Adam on the same averaged gradients."""

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer_lab.exercises._checker.ctx import Ctx
from trainer_lab.exercises._checker.kit import (
    batches,
    flat,
    list_diff,
    params_digest,
    tiny_mlp,
    train_reference,
)

STEPS = 4


def _state_numel(obj: object) -> int:
    total, seen = 0, set()
    for value in vars(obj).values():
        for opt in value if isinstance(value, list | tuple) else [value]:
            if isinstance(opt, torch.optim.Optimizer) and id(opt) not in seen:
                seen.add(id(opt))
                for state in opt.state.values():
                    total += sum(t.numel() for t in state.values()
                                 if torch.is_tensor(t) and t.dim() > 0)  # fmt: skip
    return total


def run(ctx: Ctx) -> None:
    cls = ctx.attr("ShardedAdam")
    data = [batches(400 + r, STEPS) for r in range(ctx.world_size)]
    model = tiny_mlp(depth=4)
    ddp = DDP(model)
    opt = ctx.call(cls, model.parameters(), lr=0.01)
    for step in range(STEPS):
        ctx.call(opt.zero_grad)
        x, y = data[ctx.rank][step]
        nn.functional.mse_loss(ddp(x), y).backward()
        ctx.call(opt.step)
    numel = sum(p.numel() for p in model.parameters())
    held = ctx.gather("state", _state_numel(opt))
    full = 2 * numel  # exp_avg and exp_avg_sq
    ok = all(0 < h <= 0.75 * full for h in held) and sum(held) >= full
    ctx.check("state_sharded", ok,
              f"Adam state values per rank: {held}, a full copy is {full}"
              + ("" if ok else ": every rank keeps the whole state, not its share"))  # fmt: skip
    digests = ctx.gather("digest", params_digest(model))
    ctx.check("params_in_sync", len(set(digests)) == 1,
              "identical on every rank" if len(set(digests)) == 1 else
              f"parameter digests differ across ranks: {digests} (each rank updated only its own "
              "share: broadcast the updated parameters)")  # fmt: skip
    ref = tiny_mlp(depth=4)
    train_reference(ref, torch.optim.Adam(ref.parameters(), lr=0.01), data, STEPS)
    diff = list_diff(flat(model), flat(ref))
    ctx.check("matches_adam", diff < 1e-5, f"max |param - Adam reference| = {diff:.2e}")

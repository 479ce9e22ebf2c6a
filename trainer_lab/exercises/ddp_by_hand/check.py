"""ddp-by-hand: train 3 steps with the user's sync on W ranks, compare across ranks and with
one process training on the concatenated batch."""

import torch
from torch import nn

from trainer_lab.exercises._checker.ctx import Ctx
from trainer_lab.exercises._checker.kit import (
    batches,
    flat,
    list_diff,
    params_digest,
    tiny_mlp,
    train_reference,
)

STEPS = 3


def run(ctx: Ctx) -> None:
    sync = ctx.attr("sync_gradients")
    data = [batches(100 + r, STEPS) for r in range(ctx.world_size)]
    model = tiny_mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        x, y = data[ctx.rank][step]
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        ctx.call(sync, model)
        opt.step()
    digests = ctx.gather("digest", params_digest(model))
    same = len(set(digests)) == 1
    ctx.check(
        "params_in_sync",
        same,
        "parameters identical on every rank after 3 steps"
        if same
        else f"parameter digests differ across ranks after 3 steps: {digests}; expected "
        "identical parameters. Likely cause: the gradients are not the same on every rank "
        "after sync_gradients (a parameter's gradient is not all-reduced, or not on every rank)",
    )
    ref = tiny_mlp()
    train_reference(ref, torch.optim.SGD(ref.parameters(), lr=0.1), data, STEPS)
    diff = list_diff(flat(model), flat(ref))
    ratio = _update_ratio(model, ref)
    ok = diff < 1e-5
    detail = f"max |param - reference| = {diff:.2e}"
    if not ok:
        detail += "; expected below 1e-05"
        if ratio is not None:
            detail += f"; your update is {ratio:.2f}x the reference's"
        if not same:
            detail += ". Likely cause: the ranks are out of sync (see params_in_sync)"
        elif ratio is not None and abs(ratio - ctx.world_size) < 0.3:
            detail += ". Likely cause: the gradients are a sum over ranks, not the average"
        else:
            detail += ". Likely cause: the synced gradient is not the mean of the ranks' gradients"
    ctx.check("matches_reference", ok, detail)


def _update_ratio(model: nn.Module, ref: nn.Module) -> float | None:
    start = flat(tiny_mlp())
    mine = sum(abs(a - s) for a, s in zip(flat(model), start, strict=True))
    theirs = sum(abs(a - s) for a, s in zip(flat(ref), start, strict=True))
    return mine / theirs if theirs else None

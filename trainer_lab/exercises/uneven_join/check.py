"""uneven-join: rank r gets 3 + 2r batches; a pre-forward hook on the model records which input
rows reached it, and a batch counts as used when all its rows did (extra forwards, or a batch
split into smaller forwards, are the user's business).

matches_reference replays the ranks' batches in one process: at step s, the gradient of every
rank that still has a batch s, summed and divided by the world size (DDP under Join: the joined
ranks' shadow all-reduces contribute zeros) or by the number of those ranks (Join with
divide_by_initial_world_size=False), then one SGD step."""

import time

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError
from trainer_lab.exercises._checker.kit import batches, flat, list_diff, params_digest, tiny_mlp

LR, TOL = 0.05, 1e-5


def _data(rank: int) -> list:
    return batches(200 + rank, 3 + 2 * rank)


def _reference(world: int, per_active: bool, zero_grad: bool = True) -> list[float]:
    """The parameters after one process replays every rank's steps (see the module docstring).
    zero_grad=False replays DDP when .grad is never zeroed: every rank that still has a batch
    all-reduces its accumulated .grad plus the new gradient, so under Join the old part is
    divided again too."""
    model = tiny_mlp()
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=LR)
    data = [_data(r) for r in range(world)]
    for step in range(max(len(d) for d in data)):
        active = [d[step] for d in data if step < len(d)]
        old = [torch.zeros_like(p) if p.grad is None or zero_grad else p.grad for p in params]
        total = [torch.zeros_like(p) for p in params]
        for x, y in active:
            grads = torch.autograd.grad(nn.functional.mse_loss(model(x), y), params)
            total = [t + o + g for t, o, g in zip(total, old, grads, strict=True)]
        for p, t in zip(params, total, strict=True):
            p.grad = t / (len(active) if per_active else world)
        opt.step()
    return flat(model)


def _matches_reference(ctx: Ctx, model: nn.Module) -> None:
    mine = flat(model)
    diffs = [list_diff(mine, _reference(ctx.world_size, per)) for per in (False, True)]
    diff = min(diffs)
    if diff < TOL:
        ctx.check("matches_reference", True, f"max |param - reference| = {diff:.1e}")
        return
    start = flat(tiny_mlp())
    if list_diff(mine, start) == 0.0:
        cause = "the parameters never moved: optimizer.step() is not called"
    elif min(list_diff(mine, _reference(ctx.world_size, per, zero_grad=False))
             for per in (False, True)) < TOL:  # fmt: skip
        cause = (
            "the gradients accumulate across steps: optimizer.zero_grad() is not called before "
            "each backward"
        )
    else:
        cause = (
            "the steps differ from DDP's: a batch is trained twice, the loss or the step is "
            "scaled, or the optimizer steps at another point than once per batch"
        )
    ctx.check(
        "matches_reference",
        False,
        f"max |param - reference| = {diff:.2e}; expected below {TOL:.0e} "
        "(one SGD step per batch on the gradient averaged over the ranks that still have a "
        f"batch). Likely cause: {cause}",
    )


def run(ctx: Ctx) -> None:
    fn = ctx.attr("train_epoch")
    model = tiny_mlp()
    seen: set[bytes] = set()  # the input rows that reached the model's forward
    model.register_forward_pre_hook(
        lambda _m, args: seen.update(row.numpy().tobytes() for row in args[0].detach())
    )
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    mine = _data(ctx.rank)
    start = time.monotonic()
    try:
        ctx.call(fn, ddp, opt, mine)
        error = ""
    except UserCodeError as e:
        error = str(e)
    took = time.monotonic() - start
    ctx.check("no_hang", not error, f"finished {len(mine)} batches in {took:.1f} s" if not error
              else f"{error} after {took:.1f} s; expected every rank to finish. Likely cause: "
              "the rank with more batches waits in DDP's all-reduce for a peer that already "
              "left the loop")  # fmt: skip
    used = sum(all(row.numpy().tobytes() in seen for row in x) for x, _ in mine)
    counts = ctx.gather("calls", [used, len(mine), params_digest(model), bool(error)])
    short = [f"rank {r} ran {c} of its {n} batches" for r, (c, n, _, _) in enumerate(counts)
             if c != n]  # fmt: skip
    detail = f"batches that ran forward, per rank: {[c[0] for c in counts]}"
    if short:
        detail = (
            f"{'; '.join(short)}; expected every batch. Likely cause: the ranks stop at the "
            "shortest rank's count (or a batch is skipped) instead of letting the longer rank "
            "finish under Join"
        )
    ctx.check("all_batches_used", not short, detail)
    digests = [c[2] for c in counts]
    if any(c[3] for c in counts):
        ctx.check("params_in_sync", False, "not compared: the epoch did not finish (see no_hang)")
        ctx.check(
            "matches_reference", False, "not compared: the epoch did not finish (see no_hang)"
        )
        return
    ctx.check("params_in_sync", len(set(digests)) == 1,
              "identical parameters on every rank" if len(set(digests)) == 1 else
              f"parameter digests differ across ranks: {digests}; expected identical parameters. "
              "Likely cause: the longer rank's extra steps were not all-reduced with a peer "
              "(no Join shadowing them), so only its replica moved")  # fmt: skip
    if short:
        ctx.check(
            "matches_reference",
            False,
            "not compared: not every batch ran forward (see all_batches_used)",
        )
        return
    _matches_reference(ctx, model)

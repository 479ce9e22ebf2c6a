"""grad-accum-no-sync: 2 accumulation steps on W ranks, of k = 4 micro-batches of 3 samples and
of k = 3 of 2 (never k samples each, and k changes between steps, so a loss divided by len(x) or
by a constant is not the mean); DDP's comm hook counts the bucket all-reduces; the reference is
one process stepping on all ranks' data at once. A wrong answer's update is replayed with each
likely scaling (no division, division by the micro-batch's size) to name the cause."""

from collections.abc import Callable

import torch
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer_lab.exercises._checker.ctx import Ctx
from trainer_lab.exercises._checker.kit import batches, flat, list_diff, params_digest, tiny_mlp

PLAN = ((4, 3), (3, 2))  # per optimizer step: (k micro-batches, samples in each)
STEPS = len(PLAN)
LR = 0.1
# per-micro-batch loss factor of a wrong answer, given (k, samples): what the cause names
SCALINGS: dict[str, Callable[[int, int], float]] = {
    "the loss is not divided by the number of micro-batches (k)": lambda k, n: 1.0,
    "the loss is divided by the micro-batch's size (len(x)), not by the number of "
    "micro-batches (k)": lambda k, n: 1.0 / n,
}


def _replay(data: list[list[list[tuple]]], factor: Callable[[int, int], float]) -> list[float]:
    """The parameters after DDP averages, over ranks, each rank's sum of its micro-batches'
    gradients of mse_loss * factor(k, samples)."""
    model = tiny_mlp()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for step, (k, n) in enumerate(PLAN):
        opt.zero_grad()
        for rank_data in data:
            for x, y in rank_data[step]:
                loss = nn.functional.mse_loss(model(x), y) * factor(k, n) / len(data)
                loss.backward()
        opt.step()
    return flat(model)


def run(ctx: Ctx) -> None:
    fn = ctx.attr("accumulate_step")
    data = [
        [batches(300 + 10 * r + step, k, size=n) for step, (k, n) in enumerate(PLAN)]
        for r in range(ctx.world_size)
    ]
    model = tiny_mlp()
    ddp = DDP(model, bucket_cap_mb=25)
    reduced = [0]

    def counting(state, bucket):
        reduced[0] += 1
        return allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, counting)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    per_step = []
    for step in range(STEPS):
        before = reduced[0]
        ctx.call(fn, ddp, opt, data[ctx.rank][step])
        per_step.append(reduced[0] - before)
    ref = tiny_mlp()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=LR)
    for step in range(STEPS):
        chunk = [b for d in data for b in d[step]]
        ref_opt.zero_grad()
        x, y = torch.cat([b[0] for b in chunk]), torch.cat([b[1] for b in chunk])
        nn.functional.mse_loss(ref(x), y).backward()
        ref_opt.step()
    diff = list_diff(flat(model), flat(ref))
    digests = ctx.gather("digest", params_digest(model))
    in_sync = len(set(digests)) == 1
    start = flat(tiny_mlp())
    mine = sum(abs(a - s) for a, s in zip(flat(model), start, strict=True))
    theirs = sum(abs(a - s) for a, s in zip(flat(ref), start, strict=True)) or 1.0
    detail = (
        f"max |param - reference| = {diff:.2e}; your update is {mine / theirs:.2f}x the reference's"
    )
    if diff >= 1e-5:
        mine_flat = flat(model)
        causes = [c for c, f in SCALINGS.items() if list_diff(mine_flat, _replay(data, f)) < 1e-5]
        if not in_sync:
            cause = "the ranks' parameters differ (see params_in_sync)"
        elif causes:
            cause = causes[0]
        else:
            cause = "the accumulated gradient is not the mean over all micro-batches"
        detail += f"; expected below 1e-05. Likely cause: {cause}"
    ctx.check("matches_big_batch", diff < 1e-5, detail)
    if in_sync:
        detail = "identical parameters on every rank after each step"
    else:
        detail = (
            f"parameter digests differ across ranks after {STEPS} steps: {digests}; expected "
            "identical parameters. Likely cause: some micro-batches' gradients stay local: the "
            "backward that DDP all-reduces is not the last one (a later backward under no_sync "
            "adds gradients only this rank has), or no backward is all-reduced"
        )
    ctx.check("params_in_sync", in_sync, detail)
    ok = all(n == 1 for n in per_step)
    ks = [k for k, _ in PLAN]
    detail = f"gradient all-reduces per optimizer step: {per_step} (one bucket; {ks} micro-batches)"
    if not ok:
        if all(n == 0 for n in per_step):
            cause = "every backward ran under no_sync(), so the gradients were never all-reduced"
        elif all(n >= k for n, k in zip(per_step, ks, strict=True)):
            cause = "every micro-batch's backward synced: no_sync() is not used around them"
        else:
            cause = "more than one backward per step ran outside no_sync()"
        detail += f"; expected 1 per step. Likely cause: {cause}"
    ctx.check("one_allreduce_per_step", ok, detail)

"""bucketed-allreduce: 3 SGD steps of a 4-layer MLP (8 parameters, 3332 bytes of gradients) with
1100-byte buckets. The checker wraps torch.distributed.all_reduce to count the calls and their
bytes, and its own gradient hooks (registered before the user's) count the gradients ready at
each launch; the reference is one process training on all ranks' data.

bucket_count also runs one step with buckets of each of EXACT's sizes, which the gradients fill
exactly (they arrive as 4, 64, 64, 1024, 64, 1024, 64, 1024 bytes): 1156 bytes is filled by the
first four, 1088 by the second and the third bucket. The all-reduces must carry what packing the
gradients in their arrival order gives (a full bucket launched whole); an off-by-one in a
bucket's fill, at the start or after a launch, splits one."""

import math

import torch
import torch.distributed as dist
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

STEPS, BUCKET, LR = 3, 1100, 0.1
EXACT = (4 + 64 + 64 + 1024, 1024 + 64)  # bucket sizes that the gradients fill exactly


def _packed(sizes: list[int], cap: int) -> list[int]:
    """Bucket sizes when gradients of `sizes` bytes join the open bucket in that order and a
    bucket is launched when the next one would not fit."""
    buckets, size = [], 0
    for n in sizes:
        if size and size + n > cap:
            buckets.append(size)
            size = 0
        size += n
    return [*buckets, size] if size else buckets


def run(ctx: Ctx) -> None:
    cls = ctx.attr("BucketedAllReduce")
    data = [batches(600 + r, STEPS) for r in range(ctx.world_size)]
    model = tiny_mlp(depth=4)
    params = list(model.parameters())
    total = sum(p.numel() * p.element_size() for p in params)
    ready = [0]
    for p in params:
        p.register_post_accumulate_grad_hook(lambda _p: ready.__setitem__(0, ready[0] + 1))
    calls: list[tuple[int, int]] = []  # (bytes, gradients ready at the launch)
    real = dist.all_reduce

    def counting(tensor: torch.Tensor, *args: object, **kwargs: object) -> object:
        calls.append((tensor.numel() * tensor.element_size(), ready[0]))
        return real(tensor, *args, **kwargs)

    dist.all_reduce = counting
    if getattr(ctx.user, "all_reduce", None) is real:  # `from torch.distributed import all_reduce`
        ctx.user.all_reduce = counting
    per_step: list[list[tuple[int, int]]] = []
    exact: list[tuple[int, list[int], list[int]]] = []  # (bucket, arrivals, all-reduces)
    try:
        hooks = ctx.call(cls, model, BUCKET)
        opt = torch.optim.SGD(params, lr=LR)
        for step in range(STEPS):
            opt.zero_grad(set_to_none=True)
            ready[0], before = 0, len(calls)
            x, y = data[ctx.rank][step]
            loss = nn.functional.mse_loss(model(x), y)
            ctx.call(loss.backward)
            ctx.call(hooks.wait)
            opt.step()
            per_step.append(calls[before:])
        for cap in EXACT:
            other = tiny_mlp(depth=4)
            arrived: list[int] = []  # gradient bytes in arrival order (hooks before the user's)
            for p in other.parameters():
                p.register_post_accumulate_grad_hook(
                    lambda q, seen=arrived: seen.append(q.grad.numel() * q.grad.element_size())
                )
            other_hooks = ctx.call(cls, other, cap)
            before = len(calls)
            x, y = data[ctx.rank][0]
            ctx.call(nn.functional.mse_loss(other(x), y).backward)
            ctx.call(other_hooks.wait)
            exact.append((cap, arrived, [b for b, _ in calls[before:]]))
    finally:
        dist.all_reduce = real

    ref = tiny_mlp(depth=4)
    train_reference(ref, torch.optim.SGD(ref.parameters(), lr=LR), data, STEPS)
    diff = list_diff(flat(model), flat(ref))
    start = flat(tiny_mlp(depth=4))
    mine = sum(abs(a - s) for a, s in zip(flat(model), start, strict=True))
    theirs = sum(abs(a - s) for a, s in zip(flat(ref), start, strict=True)) or 1.0
    digests = ctx.gather("digest", params_digest(model))
    detail = f"max |param - reference| = {diff:.2e}; your update is {mine / theirs:.2f}x the "
    detail += "reference's"
    if len(set(digests)) > 1:
        detail += (
            f"; parameter digests differ across ranks: {digests}; expected identical "
            "parameters equal to the reference. Likely cause: some gradients are not "
            "all-reduced (a bucket never launched, or its result not copied back before the step)"
        )
    elif diff >= 1e-5 and abs(mine / theirs - ctx.world_size) < 0.5:
        detail += (
            "; expected below 1e-05. Likely cause: the buckets hold the sum over ranks, not "
            "the average"
        )
    elif diff >= 1e-5:
        detail += (
            "; expected below 1e-05. Likely cause: the gradients copied back are not the "
            "average of the ranks' (slices copied to the wrong parameters, or stale buckets)"
        )
    ctx.check("matches_reference", diff < 1e-5 and len(set(digests)) == 1, detail)

    least = math.ceil(total / BUCKET)
    counts = [len(s) for s in per_step]
    sizes = sorted({b for s in per_step for b, _ in s}, reverse=True)
    ok = all(least <= n <= 2 * least - 1 for n in counts) and all(b <= BUCKET for b in sizes)
    detail = (
        f"all-reduces per step: {counts}, sizes {sizes} bytes; {len(params)} gradients of "
        f"{total} bytes in buckets of <= {BUCKET} bytes take {least} to {2 * least - 1}"
    )
    if not ok and counts and max(counts) >= len(params):
        detail += (
            ". Likely cause: one all-reduce per parameter: the gradients are not packed into "
            "buckets"
        )
    elif not ok and sizes and sizes[0] > BUCKET:
        detail += f". Likely cause: a bucket of {sizes[0]} bytes is over the {BUCKET}-byte limit"
    elif not ok and counts and min(counts) < least:
        detail += ". Likely cause: some gradients are never all-reduced (a bucket not launched)"
    elif not ok:
        detail += ". Likely cause: buckets are launched before they are full"
    for cap, arrived, got in exact:
        want = _packed(arrived, cap)
        if ok and got != want:
            ok = False
            detail += (
                f". With {cap}-byte buckets the all-reduces carried {got} bytes; the gradients "
                f"arrived as {arrived} bytes, so a bucket is filled exactly and packing them in "
                f"that order gives {want}. Likely cause: an off-by-one in a bucket's fill (the "
                "size starts at 1, at the start or after a launch, or a full bucket counts as "
                "overflowing: >= instead of >)"
            )
    if ok:
        detail += f"; buckets of {' and '.join(map(str, EXACT))} bytes that the gradients fill "
        detail += "exactly are launched whole"
    ctx.check("bucket_count", ok, detail)

    firsts = [s[0][1] if s else None for s in per_step]
    ok = all(f is not None and f < len(params) for f in firsts)
    detail = f"gradients ready when each step's first all-reduce started: {firsts} of {len(params)}"
    if not ok:
        detail += (
            "; expected fewer than all. Likely cause: the first all-reduce waited for the end "
            "of backward (launched from wait(), not from a gradient hook)"
        )
    ctx.check("overlaps_backward", ok, detail)

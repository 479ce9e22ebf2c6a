"""bucketed-allreduce: 3 SGD steps of a 4-layer MLP (8 parameters, 3332 bytes of gradients) with
1100-byte buckets. The all-reduces are counted where torch dispatches them (a TorchDispatchMode
sees every c10d allreduce op, however the user's code reached dist.all_reduce: a name imported
at load time, a functools.partial, a method alias; and the functional collectives' all_reduce),
with their bytes; the checker's own gradient
hooks (registered before the user's) count the gradients ready at each launch. The reference is
one process training on all ranks' data.

bucket_count also runs one step with EXACT-byte buckets, which pairs of gradients fill exactly
(they arrive as 4, 64, 64, 1024, 64, 1024, 64, 1024 bytes; in parameter order 1024 and 64
alternate): a bucket is launched only when the next gradient would not fit, so two consecutive
all-reduces of one backward never fit in one bucket together. Which order the gradients are
packed in (arrival, or a plan over the parameters) is the user's choice; an off-by-one in a
bucket's fill (`>=` for `>`, a size starting at 1) splits a bucket that fits and fails."""

import contextlib
import itertools
import math

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

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
EXACT = 1024 + 64  # a bucket size that pairs of gradients fill exactly


def _allreduce_ops() -> set:
    """The dispatcher's all-reduce ops: c10d's (dist.all_reduce, ProcessGroup.allreduce, ...)
    and the functional collectives' (torch.distributed._functional_collectives.all_reduce and
    what DTensor's Partial -> Replicate runs), which never reach c10d.allreduce_."""
    import torch.distributed._functional_collectives  # registers the ops

    names = {
        "c10d": ("allreduce_", "allreduce_coalesced_"),
        "_c10d_functional": ("all_reduce", "all_reduce_", "all_reduce_coalesced",
                             "all_reduce_coalesced_"),
        "c10d_functional": ("all_reduce", "all_reduce_coalesced"),  # the legacy namespace
    }  # fmt: skip
    found = set()
    for namespace, ops in names.items():
        for op in ops:
            with contextlib.suppress(AttributeError, RuntimeError):  # not in this torch
                found.add(getattr(getattr(torch.ops, namespace), op))
    return found


ALLREDUCE_OPS = _allreduce_ops()


class _CountAllReduces(TorchDispatchMode):
    """Records (bytes, gradients ready) for every c10d all-reduce dispatched while active."""

    def __init__(self, ready: list[int]) -> None:
        super().__init__()
        self.ready = ready
        self.calls: list[tuple[int, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func._overloadpacket in ALLREDUCE_OPS:
            tensors = args[0] if isinstance(args[0], list | tuple) else [args[0]]
            nbytes = sum(t.numel() * t.element_size() for t in tensors)
            self.calls.append((nbytes, self.ready[0]))
        return func(*args, **(kwargs or {}))


def _fitting_pair(sizes: list[int], cap: int) -> tuple[int, int] | None:
    """Two consecutive all-reduces that would have fit in one bucket of `cap` bytes."""
    return next(((a, b) for a, b in itertools.pairwise(sizes) if a + b <= cap), None)


def run(ctx: Ctx) -> None:
    cls = ctx.attr("BucketedAllReduce")
    data = [batches(600 + r, STEPS) for r in range(ctx.world_size)]
    model = tiny_mlp(depth=4)
    params = list(model.parameters())
    total = sum(p.numel() * p.element_size() for p in params)
    ready = [0]
    for p in params:
        p.register_post_accumulate_grad_hook(lambda _p: ready.__setitem__(0, ready[0] + 1))
    counter = _CountAllReduces(ready)
    calls = counter.calls  # (bytes, gradients ready at the launch)
    per_step: list[list[tuple[int, int]]] = []
    with counter:
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
        other = tiny_mlp(depth=4)
        other_hooks = ctx.call(cls, other, EXACT)
        before = len(calls)
        x, y = data[ctx.rank][0]
        ctx.call(nn.functional.mse_loss(other(x), y).backward)
        ctx.call(other_hooks.wait)
        exact = [b for b, _ in calls[before:]]

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
    for cap, sizes_seen in [*((BUCKET, [b for b, _ in s]) for s in per_step), (EXACT, exact)]:
        pair = _fitting_pair(sizes_seen, cap)
        if ok and pair:
            ok = False
            detail += (
                f". With {cap}-byte buckets the all-reduces carried {sizes_seen} bytes: "
                f"{pair[0]} and {pair[1]} bytes in a row fit in one bucket, so a bucket was "
                "launched before the next gradient overflowed it. Likely cause: an off-by-one "
                "in a bucket's fill (the size starts at 1, at the start or after a launch, or a "
                "full bucket counts as overflowing: >= instead of >)"
            )
    if ok:
        detail += f"; buckets of {EXACT} bytes that pairs of gradients fill exactly are launched "
        detail += "whole"
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

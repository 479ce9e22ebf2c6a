"""zero1-sharded-optimizer: 4 DDP steps with the user's optimizer; the reference is plain Adam on
the same averaged gradients.

The state a rank keeps is every tensor reachable from the user's optimizer object (its
attributes, lists, dicts, the state of any torch optimizer it holds, a hand-written Adam's own
moments) or from the user's module globals, counted once per storage, leaving out the
parameters and their gradients, and copies of them: a tensor whose every value is a current
parameter or gradient value (or a padding zero) is a master copy or a communication buffer,
not optimizer state. What is left is Adam's moments. A sharded state is at most 3/4 of a full
copy (2 values per parameter) on every rank."""

from types import MappingProxyType, ModuleType
from typing import Any

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


def _is_copy(item: torch.Tensor, known: torch.Tensor) -> bool:
    """Whether every value in `item`'s storage is a parameter or gradient value (or 0)."""
    if not item.is_floating_point():
        return False
    values = torch.empty(0, dtype=item.dtype).set_(item.untyped_storage())
    return bool(torch.isin(values.detach().float(), known).all())


def _state_numel(roots: list[object], params: list[torch.Tensor]) -> int:
    """Values in the tensors reachable from `roots` (the optimizer, the user's module globals)
    that are not the parameters or their gradients."""
    own = [t for p in params for t in (p, p.grad) if t is not None]
    skip = {t.untyped_storage().data_ptr() for t in own}
    known = torch.cat([t.detach().reshape(-1).float() for t in own] + [torch.zeros(1)])
    seen: set[int] = set()
    total = 0
    todo: list[tuple[Any, int]] = [(root, 0) for root in roots]
    while todo:
        item, depth = todo.pop()
        if id(item) in seen or depth > 8:
            continue
        seen.add(id(item))
        if isinstance(item, torch.Tensor):
            storage = item.untyped_storage()
            if item.dim() > 0 and storage.data_ptr() not in skip:
                skip.add(storage.data_ptr())
                if not _is_copy(item, known):
                    total += storage.nbytes() // max(item.element_size(), 1)
            continue
        if isinstance(item, nn.Module | ModuleType | str | bytes | int | float | bool | type(None)):
            continue
        if isinstance(item, dict | MappingProxyType):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            children = list(item)
        else:
            try:
                children = list(vars(item).values())
            except TypeError:  # no __dict__: a C++ object (a process group ...)
                continue
        todo.extend((child, depth + 1) for child in children)
    return total


def _sharding_problem(held: list[int], full: int) -> str:
    """ "" when every rank holds a share of at most 3/4 and together they hold it all."""
    if all(0 < h <= 0.75 * full for h in held) and sum(held) >= full:
        return ""
    shares = ", ".join(f"rank {r} {h} ({h / full:.0%})" for r, h in enumerate(held))
    seen = f"Adam state values per rank: {shares} of a full copy's {full}"
    expected = "expected about 1/W of it on each rank (at most 75 %), all of it across the ranks"
    if all(h >= 0.9 * full for h in held):
        cause = "every rank keeps the whole state: each steps an Adam over all the parameters"
    elif sum(held) < full:
        cause = (
            f"only {sum(held)} of {full} state values exist across the ranks: some parameters "
            "are stepped by no rank"
        )
    elif max(held) > 0.75 * full and sum(held) < 1.25 * full:
        cause = (
            "the state is split, but unevenly: the parameters are dealt out by count or index "
            "(round-robin), not by size, so one rank owns most of the values"
        )
    else:
        cause = "some parameters' state is kept on more than one rank"
    return f"{seen}; {expected}. Likely cause: {cause}"


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
    roots = [opt, dict(vars(ctx.user))]  # state kept in a module-level dict counts too
    held = ctx.gather("state", _state_numel(roots, list(model.parameters())))
    full = 2 * numel  # exp_avg and exp_avg_sq
    problem = _sharding_problem(held, full)
    ctx.check(
        "state_sharded",
        not problem,
        problem or f"Adam state values per rank: {held}, a full copy is {full}",
    )
    digests = ctx.gather("digest", params_digest(model))
    in_sync = len(set(digests)) == 1
    ctx.check("params_in_sync", in_sync,
              "identical on every rank" if in_sync else
              f"parameter digests differ across ranks: {digests}; expected identical parameters "
              "after every step. Likely cause: a rank's updated share never reaches the others "
              "(the owner does not send it, or the others receive from another rank than the "
              "one that stepped it)")  # fmt: skip
    ref = tiny_mlp(depth=4)
    train_reference(ref, torch.optim.Adam(ref.parameters(), lr=0.01), data, STEPS)
    diff = list_diff(flat(model), flat(ref))
    detail = f"max |param - Adam reference| = {diff:.2e}"
    if diff >= 1e-5:
        cause = (
            "the ranks are out of sync (see params_in_sync)"
            if not in_sync
            else "the update is not Adam's (lr, betas (0.9, 0.999), eps 1e-8, bias correction), "
            "or a parameter is stepped more than once or not at all"
        )
        detail += f"; expected below 1e-05. Likely cause: {cause}"
    ctx.check("matches_adam", diff < 1e-5, detail)

"""fsdp2-practice worker (imports torch): accumulation without gradient sync, the
MixedPrecisionPolicy's dtypes, and meta-device init with reset_parameters, under FSDP2."""

from __future__ import annotations

import copy
import math
from collections import Counter
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor._random import is_rng_supported_mesh

from trainer_lab.train.worker import WorkerContext

DIM, HIDDEN, BATCH = 16, 32, 4
CALLS: Counter[str] = Counter()
INPUT_DTYPES: dict[str, str] = {}  # collective kind -> dtype of its last input tensor


# FSDP2 calls these by module attribute (dist.X): the *_single names in torch 2.13, the
# tensor names in earlier releases. Counted per kind, whichever exist.
COLLECTIVES = {
    "all_gather_single": "all_gather",
    "all_gather_into_tensor": "all_gather",
    "reduce_scatter_single": "reduce_scatter",
    "reduce_scatter_tensor": "reduce_scatter",
}


def count_collectives() -> None:
    for name, kind in COLLECTIVES.items():
        original = getattr(dist, name, None)
        if original is None or getattr(original, "_counted", False):
            continue

        def counted(*args: Any, _original: Any = original, _kind: str = kind, **kw: Any) -> Any:
            CALLS[_kind] += 1
            sent = kw["input"] if "input" in kw else (args[1] if len(args) > 1 else None)
            if isinstance(sent, torch.Tensor):  # (output, input): both names, both releases
                INPUT_DTYPES[_kind] = dtype_name(sent.dtype)
            return _original(*args, **kw)

        counted._counted = True  # type: ignore[attr-defined]
        setattr(dist, name, counted)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(DIM, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, DIM))
            for _ in range(2)
        )
        self.head = nn.Linear(DIM, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


def shard(model: Net, mesh: Any, mp: MixedPrecisionPolicy | None = None) -> Net:
    kw = {"mesh": mesh} | ({"mp_policy": mp} if mp is not None else {})
    for block in model.blocks:
        fully_shard(block, **kw)
    fully_shard(model, **kw)
    return model


def batch(rank: int, micro: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1000 * micro + rank)
    return torch.randn(BATCH, DIM, generator=gen), torch.randn(BATCH, 1, generator=gen)


def loss_of(model: nn.Module, rank: int, micro: int) -> torch.Tensor:
    x, y = batch(rank, micro)
    return ((model(x) - y) ** 2).mean()


def accumulate(mesh: Any, ctx: WorkerContext, micro: int, sync: Any) -> dict[str, Any]:
    torch.manual_seed(0)
    reference = Net()
    model = shard(copy.deepcopy(reference), mesh)  # fully_shard keeps the values it shards
    CALLS.clear()
    for i in range(micro):
        model.set_requires_gradient_sync(sync(i))
        loss_of(model, ctx.rank, i).backward()
    scatters = CALLS["reduce_scatter"]
    for i in range(micro):  # the same step on one process: mean over ranks, sum over micro
        for r in range(ctx.world_size):
            (loss_of(reference, r, i) / ctx.world_size).backward()
    diff = 0.0
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        if p.grad is None:  # sync never came back on: no sharded gradient at all
            diff = math.inf
            continue
        diff = max(diff, float((p.grad.full_tensor() - q.grad).abs().max()))
    return {"reduce_scatters": scatters, "max_grad_diff": diff}


def mixed_precision(mesh: Any, sabotage: str) -> dict[str, Any]:
    torch.manual_seed(0)
    mp = None
    if sabotage != "no_mp_policy":
        reduce = torch.bfloat16 if sabotage == "reduce_bf16" else torch.float32
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=reduce)
    net = Net().to(torch.bfloat16) if sabotage == "bf16_model" else Net()  # no fp32 master left
    model = shard(net, mesh, mp)
    seen: dict[str, str] = {}

    def record(module: nn.Module, args: tuple[torch.Tensor, ...]) -> None:
        seen["compute"] = str(module.weight.dtype).removeprefix("torch.")
        seen["input"] = str(args[0].dtype).removeprefix("torch.")

    model.blocks[0][0].register_forward_pre_hook(record)
    out = model(batch(0, 0)[0].to(torch.bfloat16 if sabotage == "bf16_model" else torch.float32))
    INPUT_DTYPES.clear()
    out.float().sum().backward()
    weight = model.blocks[0][0].weight
    return {
        "reduce_dtype": INPUT_DTYPES.get("reduce_scatter", "none"),
        **reduce_dtype_left_out(mesh),
        "compute_dtype": seen["compute"],
        "input_dtype": seen["input"],
        "output_dtype": str(out.dtype).removeprefix("torch."),
        "sharded_param_dtype": str(weight.dtype).removeprefix("torch."),
        "grad_dtype": str(weight.grad.dtype).removeprefix("torch."),
    }


def reduce_dtype_left_out(mesh: Any) -> dict[str, str]:
    """MixedPrecisionPolicy(param_dtype=bf16) alone: torch 2.13's foreach_reduce takes
    `reduce_dtype or grad_dtype` (bf16 here) for the reduce-scatter, then casts the result to
    the sharded parameter's dtype (fp32)."""
    torch.manual_seed(0)
    model = shard(Net(), mesh, MixedPrecisionPolicy(param_dtype=torch.bfloat16))
    out = model(batch(0, 0)[0])
    INPUT_DTYPES.clear()
    out.float().sum().backward()
    return {
        "unset_reduce_dtype": INPUT_DTYPES.get("reduce_scatter", "none"),
        "unset_grad_dtype": dtype_name(model.blocks[0][0].weight.grad.dtype),
    }


def meta_sharded(mesh: Any, ctx: WorkerContext) -> Net:
    with torch.device("meta"):
        model = Net()  # no memory: shapes only
    shard(model, mesh)
    model.to_empty(device=ctx.device)  # this rank's shards, uninitialised
    return model


def shard_views(model: Net, world: int) -> tuple[torch.Tensor, list[torch.Tensor]]:
    weight = model.blocks[0][2].weight.full_tensor()  # FSDP2 shards dim 0 as torch.chunk does
    return weight, list(weight.chunk(world))


def meta_reset(mesh: Any, ctx: WorkerContext, sabotage: str) -> dict[str, Any]:
    """The recipe: meta, fully_shard, to_empty, reset_parameters (same seed on every rank)."""
    model = meta_sharded(mesh, ctx)
    torch.manual_seed(0)
    if sabotage != "skip_reset":
        for module in model.modules():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
    weight, chunks = shard_views(model, ctx.world_size)
    expected_std = 1 / math.sqrt(HIDDEN) / math.sqrt(3)  # kaiming_uniform(a=sqrt 5) bound / sqrt 3
    finite = bool(weight.isfinite().all())
    return {
        "weight_std_ratio": float(weight.std()) / expected_std if finite else None,
        "all_finite": finite,
        "shards_identical": bool(torch.equal(chunks[0], chunks[1])),
        "dtensor_rng": is_rng_supported_mesh(mesh),
        "on_meta": sum(p.is_meta for p in model.parameters()),
    }


def meta_broadcast(mesh: Any, ctx: WorkerContext, sabotage: str) -> dict[str, Any]:
    """Rank 0 builds the full model for real; its state dict is scattered into the shards."""
    off = sabotage == "broadcast_off"
    torch.manual_seed(0)
    reference = Net()
    model = meta_sharded(mesh, ctx)
    if off:  # a hand-written loader: every rank copies its rows out of a model of its own
        torch.manual_seed(ctx.rank)
        own = Net()
        with torch.no_grad():
            for p, q in zip(model.parameters(), own.parameters(), strict=True):
                pieces = q.chunk(ctx.world_size)
                local = p.to_local()
                local.copy_(pieces[ctx.rank] if ctx.rank < len(pieces) else q[:0])
    else:
        full = reference.state_dict() if ctx.rank == 0 else {}
        options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
        set_model_state_dict(model, full, options=options)
    _, chunks = shard_views(model, ctx.world_size)
    same = all(
        torch.equal(p.full_tensor(), q)
        for p, q in zip(model.parameters(), reference.parameters(), strict=True)
    )
    return {
        "matches_single_process": same,
        "shards_identical": bool(torch.equal(chunks[0], chunks[1])),
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    count_collectives()
    sabotage, micro = spec["sabotage"], spec["micro_steps"]
    mesh = init_device_mesh(ctx.device.type, (ctx.world_size,))
    if sabotage == "sync_every_micro":
        no_sync = accumulate(mesh, ctx, micro, lambda i: True)
    elif sabotage == "never_resync":
        no_sync = accumulate(mesh, ctx, micro, lambda i: False)
    else:
        no_sync = accumulate(mesh, ctx, micro, lambda i: i == micro - 1)
    every = accumulate(mesh, ctx, micro, lambda i: True)
    report = {
        "accum": {"no_sync": no_sync, "every_micro": every},
        "mp": mixed_precision(mesh, sabotage),
        "meta": {
            "reset": meta_reset(mesh, ctx, sabotage),
            "broadcast": meta_broadcast(mesh, ctx, sabotage),
        },
    }
    worst = torch.tensor([no_sync["max_grad_diff"], every["max_grad_diff"]], dtype=torch.float64)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    report["accum"]["no_sync"]["max_grad_diff"] = float(worst[0])
    report["accum"]["every_micro"]["max_grad_diff"] = float(worst[1])
    if ctx.rank == 0:
        ctx.events().write("fsdp2_practice", **report)

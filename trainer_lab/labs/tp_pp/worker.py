"""tp-pp worker (imports torch): tensor and pipeline parallel on a CPU mesh, comms counted."""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe, schedules
from torch.distributed.tensor import Partial, Replicate
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

from trainer_lab.train.worker import WorkerContext

DIM = 8


class MLP(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.up, self.down = nn.Linear(DIM, hidden), nn.Linear(hidden, DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def counts(mode: CommDebugMode) -> Counter[str]:
    return Counter({str(op).rsplit(".", 1)[-1]: n for op, n in mode.get_comm_counts().items()})


def tensor_parallel(ctx: WorkerContext, sabotage: str) -> dict[str, Any]:
    mesh = init_device_mesh(ctx.device.type, (ctx.world_size,))
    torch.manual_seed(0)
    reference = MLP(4 * ctx.world_size)
    model = MLP(4 * ctx.world_size)
    model.load_state_dict(reference.state_dict())
    if sabotage == "gather_between":
        plan = {
            "up": ColwiseParallel(output_layouts=Replicate()),
            "down": ColwiseParallel(output_layouts=Replicate()),
        }
    elif sabotage == "rowwise_partial":  # the partial sums are never reduced
        plan = {"up": ColwiseParallel(), "down": RowwiseParallel(output_layouts=Partial())}
    else:
        plan = {"up": ColwiseParallel(), "down": RowwiseParallel()}
    parallelize_module(model, mesh, plan)
    x = torch.randn(4, DIM, generator=torch.Generator().manual_seed(1), requires_grad=True)
    forward, backward = CommDebugMode(), CommDebugMode()
    with forward:
        out = model(x)
    with backward:
        out.sum().backward()
    reference(x).sum().backward()
    grad_diff = max(
        float((p.grad.full_tensor() - q.grad).abs().max())
        for p, q in zip(model.parameters(), reference.parameters(), strict=True)
    )
    fwd, bwd = counts(forward), counts(backward)
    return {
        "forward_all_reduces": fwd["all_reduce"],
        "backward_all_reduces": bwd["all_reduce"],
        "all_gathers": fwd["all_gather_into_tensor"] + bwd["all_gather_into_tensor"],
        "max_abs_diff": float((out - reference(x)).abs().max()),
        "grad_max_abs_diff": grad_diff,
        "local_up_shape": list(model.up.weight.to_local().shape),
    }


SENT: Counter[str] = Counter()


def count_p2p() -> None:
    original = schedules._batch_p2p
    if getattr(original, "_counted", False):
        return

    def counted(ops: list[dist.P2POp], desc: str | None = None) -> list[dist.Work]:
        SENT["isend"] += sum(op.op is dist.isend for op in ops)
        return original(ops, desc)

    counted._counted = True  # type: ignore[attr-defined]
    schedules._batch_p2p = counted


def pipeline(ctx: WorkerContext, micro: int, sabotage: str) -> dict[str, Any]:
    count_p2p()
    rank, world = ctx.rank, ctx.world_size
    torch.manual_seed(2)
    layers = nn.Sequential(*[nn.Linear(DIM, DIM) for _ in range(world)])
    reference = nn.Sequential(*[nn.Linear(DIM, DIM) for _ in range(world)])
    reference.load_state_dict(layers.state_dict())
    stage = PipelineStage(layers[rank], rank, world, ctx.device)

    def loss_fn(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return ((out - target) ** 2).mean()

    forward_only = sabotage == "forward_only"
    schedule = ScheduleGPipe(stage, n_microbatches=micro, loss_fn=None if forward_only else loss_fn)
    gen = torch.Generator().manual_seed(3)
    x, target = (
        torch.randn(2 * micro, DIM, generator=gen),
        torch.randn(2 * micro, DIM, generator=gen),
    )

    def step(losses: list[torch.Tensor]) -> None:
        if rank == 0:
            schedule.step(x)
        elif rank == world - 1 and not forward_only:
            schedule.step(target=target, losses=losses)
        else:
            schedule.step()

    step([])  # the first step may also exchange shapes (runtime shape inference): not counted
    for p in layers.parameters():
        p.grad = None
    SENT.clear()
    losses: list[torch.Tensor] = []
    step(losses)
    sends = SENT["isend"]
    whole = loss_fn(reference(x), target)
    whole.backward()
    mine, theirs = layers[rank], reference[rank]
    grads_match = all(
        p.grad is not None and torch.allclose(p.grad, q.grad, atol=1e-6)
        for p, q in zip(mine.parameters(), theirs.parameters(), strict=True)
    )
    loss = float(torch.stack(losses).mean()) if losses else None
    return {
        "sends": sends,
        "grads_match": grads_match,
        "loss_abs_diff": abs(loss - float(whole)) if loss is not None else None,
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    tp = tensor_parallel(ctx, spec["sabotage"])
    pp = pipeline(ctx, spec["microbatches"], spec["sabotage"])
    per_rank: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(per_rank, pp)
    if ctx.rank == 0:
        ctx.events().write("tp_pp", tp=tp, pp=per_rank)

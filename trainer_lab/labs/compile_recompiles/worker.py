"""compile-recompiles worker (imports torch): count Dynamo's graphs, breaks and recompiles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo as dynamo
import torch.distributed as dist
from torch import nn
from torch._dynamo.utils import counters
from torch.utils.checkpoint import checkpoint

from trainer_lab.train.worker import WorkerContext

DIM = 8
BATCH_SIZES = (2, 3, 4, 5, 6, 7)


class Scaled(nn.Module):
    def __init__(self, as_buffer: bool) -> None:
        super().__init__()
        self.lin, self.as_buffer = nn.Linear(DIM, DIM), as_buffer
        self.scale: Any = 1
        if as_buffer:
            self.register_buffer("scale_t", torch.tensor(1.0))

    def set_scale(self, value: int) -> None:
        if self.as_buffer:
            self.scale_t.fill_(value)  # same tensor, new value: no guard changes
        else:
            self.scale = value  # a Python int is a constant in the graph: its guard fails

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * (self.scale_t if self.as_buffer else self.scale)


class ItemGate(nn.Module):
    def __init__(self, use_item: bool) -> None:
        super().__init__()
        self.lin, self.use_item = nn.Linear(DIM, DIM), use_item

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        norm = y.norm().item() if self.use_item else y.norm()  # .item(): leaves the graph
        return y / (norm + 1.0)


@dynamo.disable
def checkpoint_outside_dynamo(block: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return checkpoint(block, x, use_reentrant=False)


class Checkpointed(nn.Module):
    def __init__(self, disabled: bool) -> None:
        super().__init__()
        self.run_block = checkpoint_outside_dynamo if disabled else self.checkpointed
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
            for _ in range(3)
        )

    @staticmethod
    def checkpointed(block: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(block, x, use_reentrant=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = x + self.run_block(block, x)
        return x


def counted(run: Callable[[], Any]) -> dict[str, Any]:
    dynamo.reset()
    counters.clear()
    run()
    limit_hit = any("recompile limit" in str(key) for key in counters["unimplemented"])
    return {
        "graphs": counters["stats"]["unique_graphs"],
        "graph_breaks": sum(counters["graph_break"].values()),
        "hit_recompile_limit": limit_hit,
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    sabotage, backend = spec["sabotage"], spec["backend"]
    dynamic = False if sabotage == "dynamic_false" else None
    report: dict[str, Any] = {"recompile_limit": dynamo.config.recompile_limit}

    model = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, 1))
    compiled = torch.compile(model, backend=backend, dynamic=dynamic)
    report["shapes"] = counted(lambda: [compiled(torch.randn(b, DIM)) for b in BATCH_SIZES])

    def scaled_run(as_buffer: bool) -> Callable[[], Any]:
        module = Scaled(as_buffer)
        fn = torch.compile(module, backend=backend)

        def go() -> None:
            for step in range(spec["steps"]):
                module.set_scale(step)
                fn(torch.randn(4, DIM))

        return go

    limit = 64 if sabotage == "raise_recompile_limit" else dynamo.config.recompile_limit
    with dynamo.config.patch(recompile_limit=limit):
        report["attr_int"] = counted(scaled_run(False))
    report["attr_buffer"] = counted(scaled_run(as_buffer=sabotage != "buffer_as_int"))

    with dynamo.config.patch(capture_scalar_outputs=sabotage == "capture_scalars"):
        item = torch.compile(ItemGate(True), backend=backend)
        report["item"] = counted(lambda: [item(torch.randn(4, DIM)) for _ in range(3)])
    tensor_only = torch.compile(ItemGate(False), backend=backend)
    report["tensor_only"] = counted(lambda: [tensor_only(torch.randn(4, DIM)) for _ in range(3)])

    eager = Checkpointed(disabled=sabotage == "disable_checkpoint")
    x = torch.randn(4, DIM, requires_grad=True)
    eager(x).sum().backward()
    expected = [p.grad.clone() for p in eager.parameters()]
    eager.zero_grad()
    fn = torch.compile(eager, backend=backend)
    report["checkpoint"] = counted(lambda: fn(x).sum().backward())
    report["checkpoint"]["grad_max_abs_diff"] = max(
        float((p.grad - g).abs().max()) for p, g in zip(eager.parameters(), expected, strict=True)
    )
    if dist.is_initialized():
        dist.barrier()
    if ctx.rank == 0:
        ctx.events().write("compile_recompiles", **report)

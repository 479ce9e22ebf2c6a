"""preemption worker (imports torch): train, take SIGTERM, checkpoint, exit; or resume."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.train.worker import WorkerContext

DIM = 8


def latest(folder: Path) -> Path | None:
    found = sorted(folder.glob("step-*.pt"))
    return found[-1] if found else None


def save(folder: Path, step: int, model: torch.nn.Module, opt: torch.optim.Optimizer) -> None:
    """Rank 0 writes; the rename is the commit (a kill mid-write leaves the last one intact)."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".step-{step:06d}.tmp"
    torch.save({"step": step, "model": model.state_dict(), "opt": opt.state_dict()}, tmp)
    os.replace(tmp, folder / f"step-{step:06d}.pt")


def batch(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The data of a step is a function of (step, rank): resuming needs no loader state."""
    gen = torch.Generator().manual_seed(10_000 * step + rank)
    return torch.randn(16, DIM, generator=gen), torch.randn(16, 1, generator=gen)


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    sabotage, mode = spec["sabotage"], spec["mode"]
    folder = Path(spec["ckpt_dir"])
    asked = threading.Event()
    if sabotage != "no_handler":
        signal.signal(signal.SIGTERM, lambda signum, frame: asked.set())  # flag only: no I/O here
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(DIM, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    start = 0
    found = latest(folder) if mode == "resume" else None
    if found is not None:
        state = torch.load(found, weights_only=True)
        model.load_state_dict(state["model"])
        if sabotage != "no_optimizer_state":
            opt.load_state_dict(state["opt"])
        start = state["step"] + 1
    events = ctx.events()
    events.write("start", first_step=start, resumed_from=found.name if found else None)
    world, victim = ctx.world_size, ctx.world_size - 1
    signal_step = spec["signal_step"]
    for step in range(start, spec["steps"]):
        x, y = batch(step, ctx.rank)
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(flat)  # fixed order: bit-identical across launches
        offset = 0
        for p in model.parameters():
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p) / world)
            offset += p.numel()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        events.write("train_step", step=step, loss=float(total) / world)
        if mode == "preempt" and step == signal_step + (0 if ctx.rank == victim else 1):
            os.kill(os.getpid(), signal.SIGTERM)  # the scheduler's notice, late on most ranks
        stop = torch.tensor([1.0 if asked.is_set() else 0.0])
        if sabotage != "no_agreement":
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        stopping = bool(stop.item())
        if ctx.rank == 0 and ((step + 1) % spec["checkpoint_every"] == 0 or stopping):
            save(folder, step, model, opt)
        if stopping:
            events.write("preempted", step=step)
            return
    events.write("finished", step=spec["steps"] - 1)

"""Distributed training pipeline on FSDP2: the fsdp2 stretch's model answer.

    python train.py --steps N --ckpt-dir DIR [--ckpt-every C]
    torchrun --nproc-per-node W train.py --steps N --ckpt-dir DIR [--ckpt-every C]

The round's model answer with DDP replaced by FSDP2: every Linear and then the root are
fully_shard-ed over a 1-D CPU mesh, so each rank holds 1/W of every parameter (a DTensor) and of
the optimizer state; the forward all-gathers a layer's parameters just in time, the backward
reduce-scatters (averages) its gradients. The optimizer is built after sharding, on the DTensors.

Checkpoints use torch.distributed.checkpoint (DCP): every rank writes its own shard of the model
and optimizer state into step-N.tmp/, then rank 0 renames the complete directory to step-N/ (a
reader never sees half a checkpoint). The step and every rank's RNG state ride along in extra.pt.
A plain `python train.py` trains one process without a mesh.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from drill_data import BATCH_SIZE, FEATURES, ToyDataset
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, DistributedSampler

SEED = 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, required=True, help="train until this global step")
    parser.add_argument("--ckpt-dir", type=Path, required=True)
    parser.add_argument("--ckpt-every", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-2)
    return parser.parse_args()


def init_distributed() -> tuple[int, int]:
    """(rank, world size); a plain `python train.py` is a world of one without a process group."""
    if "RANK" not in os.environ:
        return 0, 1
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    return dist.get_rank(), dist.get_world_size()


class BatchStream:
    """Batches as a function of the global step: a resume only needs the step it resumes at."""

    def __init__(self, dataset: ToyDataset, rank: int, world: int) -> None:
        self.dataset = dataset
        self.sampler = DistributedSampler(
            dataset, num_replicas=world, rank=rank, shuffle=True, seed=SEED, drop_last=True
        )
        self.steps_per_epoch = len(self.sampler) // BATCH_SIZE
        # The loader's own generator: without it, creating an iterator draws a seed from the
        # global RNG and shifts every later dropout mask after a resume.
        self.loader_rng = torch.Generator().manual_seed(SEED)

    def from_step(self, step: int):
        epoch, offset = divmod(step, self.steps_per_epoch)
        while True:
            self.sampler.set_epoch(epoch)
            order = list(self.sampler)[offset * BATCH_SIZE :]
            batches = [order[i : i + BATCH_SIZE] for i in range(0, len(order), BATCH_SIZE)]
            loader = DataLoader(self.dataset, batch_sampler=batches, generator=self.loader_rng)
            for ids, x, y in loader:
                yield epoch, ids, x, y
            epoch, offset = epoch + 1, 0


def gather_rng_states(world: int) -> list[torch.Tensor]:
    """Every rank's CPU RNG state (dropout masks differ per rank), gathered on every rank."""
    states: list[torch.Tensor] = [torch.get_rng_state()] * world
    if world > 1:
        dist.all_gather_object(states, torch.get_rng_state())
    return states


def save_checkpoint(ckpt_dir: Path, step: int, model: nn.Module, optimizer, rank, world) -> None:
    """Every rank writes its shard (DCP) into a temp dir; rank 0 renames it when all are done."""
    rng_states = gather_rng_states(world)
    final = ckpt_dir / f"step-{step:06d}"
    tmp = ckpt_dir / f".{final.name}.tmp"
    model_state, optim_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=tmp)
    if rank == 0:
        torch.save({"step": step, "rng": rng_states}, tmp / "extra.pt")
    if world > 1:
        dist.barrier()  # every shard and extra.pt written before the rename
    if rank == 0:
        os.replace(tmp, final)  # atomic: the newest step-* directory is always complete
    if world > 1:
        dist.barrier()


def load_latest_checkpoint(ckpt_dir: Path, model: nn.Module, optimizer, rank: int) -> int:
    """The global step to resume at (0 for a fresh run)."""
    done = sorted(p for p in ckpt_dir.glob("step-*") if p.is_dir())
    if not done:
        return 0
    model_state, optim_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optimizer": optim_state}
    dcp.load(state, checkpoint_id=done[-1])  # each rank reads its own shard, in place
    set_state_dict(
        model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"]
    )
    extra = torch.load(done[-1] / "extra.pt", map_location="cpu", weights_only=True)
    torch.set_rng_state(extra["rng"][rank])
    return extra["step"]


def shard(model: nn.Module, world: int) -> nn.Module:
    """FSDP2: each Linear its own unit (its parameters gathered only while it runs), then the
    root; a world of one keeps the plain model."""
    if world == 1:
        return model
    mesh = init_device_mesh("cpu", (world,))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def main() -> None:
    args = parse_args()
    rank, world = init_distributed()
    args.ckpt_dir.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(SEED)  # the same initial weights on every rank
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))
    model = shard(model, world)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)  # on the sharded parameters
    torch.manual_seed(SEED + 1 + rank)  # each rank its own dropout stream
    step = load_latest_checkpoint(args.ckpt_dir, model, optimizer, rank)
    stream = BatchStream(ToyDataset(), rank, world).from_step(step)

    while step < args.steps:
        t0 = time.perf_counter()
        epoch, _ids, x, y = next(stream)
        t1 = time.perf_counter()
        loss = nn.functional.mse_loss(model(x), y)
        t2 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # FSDP2 reduce-scatters (averages) each layer's gradients here
        t3 = time.perf_counter()
        optimizer.step()
        step += 1
        t4 = time.perf_counter()
        if step % args.ckpt_every == 0:
            save_checkpoint(args.ckpt_dir, step, model, optimizer, rank, world)
        mean_loss = loss.detach()
        if world > 1:
            dist.all_reduce(mean_loss)
            mean_loss /= world
        t5 = time.perf_counter()
        phases = {
            "data": t1 - t0,
            "forward": t2 - t1,
            "backward": t3 - t2,
            "optimizer": t4 - t3,
            "checkpoint_and_log": t5 - t4,
        }
        if rank == 0:  # one log line per step, from one rank
            line = {"step": step, "epoch": epoch, "loss": mean_loss.item()}
            print(json.dumps({**line, "phases": phases, "step_time": t5 - t0}), flush=True)

    if world > 1:
        # Meet (a rank stuck behind is named within the timeout), then leave. gloo may still
        # abort a rank while closing its connections: a race in torch, which the contract
        # does not count against the script.
        dist.monitored_barrier(timeout=timedelta(seconds=60))
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

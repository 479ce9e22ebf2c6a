"""Distributed training pipeline: the coding round's model answer.

    python train.py --steps N --ckpt-dir DIR [--ckpt-every C]
    torchrun --nproc-per-node W train.py --steps N --ckpt-dir DIR [--ckpt-every C]

One process per rank (gloo on CPU). Every rank reads its own shard of each epoch's shuffled order;
DDP averages gradients, so the replicas stay identical. Rank 0 writes a checkpoint every C steps
(write to a temp file, fsync it, rename, fsync the directory: a reader never sees half a file,
and a power cut keeps either the old checkpoint or the new one) holding everything the next
step depends on: weights, optimizer state, the global step (which fixes the sampler position) and
every rank's RNG state. A restarted job resumes by itself from the newest complete checkpoint.
Rank 0 prints one JSON line per step: step, epoch, loss (mean over ranks) and phase times.
"""

# phase: skeleton (the phase markers: drill.mock.coding.walkthrough shows each part)
from __future__ import annotations

import argparse
import json
import os
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, FEATURES, ToyDataset
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

SEED = 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, required=True, help="train until this global step")
    parser.add_argument("--ckpt-dir", type=Path, required=True)
    parser.add_argument("--ckpt-every", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-2)
    return parser.parse_args()


# phase: distributed
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


# phase: restart
def gather_rng_states(world: int) -> list[torch.Tensor]:
    """Every rank's CPU RNG state (dropout masks differ per rank), gathered on every rank."""
    states: list[torch.Tensor] = [torch.get_rng_state()] * world
    if world > 1:
        dist.all_gather_object(states, torch.get_rng_state())
    return states


def save_checkpoint(ckpt_dir: Path, step: int, model: nn.Module, optimizer, rank, world) -> None:
    rng_states = gather_rng_states(world)
    if rank != 0:
        return  # one writer: the replicas are identical, rank 0 holds the whole state
    state = {
        "step": step,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "rng": rng_states,
    }
    final = ckpt_dir / f"step-{step:06d}.pt"
    tmp = ckpt_dir / f".{final.name}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())  # the bytes on disk before the rename publishes them
    os.replace(tmp, final)  # atomic: the newest step-*.pt is always complete
    fsync_dir(ckpt_dir)  # the rename itself on disk: a power cut cannot undo it


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load_latest_checkpoint(ckpt_dir: Path, model: nn.Module, optimizer, rank: int) -> int:
    """The global step to resume at (0 for a fresh run)."""
    done = sorted(ckpt_dir.glob("step-*.pt"))
    if not done:
        return 0
    state = torch.load(done[-1], map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"][rank])
    return state["step"]


# phase: skeleton
def main() -> None:
    args = parse_args()
    # phase: distributed
    rank, world = init_distributed()
    # phase: restart
    args.ckpt_dir.mkdir(parents=True, exist_ok=True)

    # phase: skeleton
    torch.manual_seed(SEED)  # the same initial weights on every rank
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    # phase: restart
    torch.manual_seed(SEED + 1 + rank)  # each rank its own dropout stream
    step = load_latest_checkpoint(args.ckpt_dir, model, optimizer, rank)
    # phase: distributed
    ddp = DistributedDataParallel(model) if world > 1 else model
    stream = BatchStream(ToyDataset(), rank, world).from_step(step)

    # phase: skeleton
    while step < args.steps:
        t0 = time.perf_counter()
        epoch, _ids, x, y = next(stream)
        t1 = time.perf_counter()
        loss = nn.functional.mse_loss(ddp(x), y)
        t2 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # DDP all-reduces the gradients here
        t3 = time.perf_counter()
        optimizer.step()
        step += 1
        t4 = time.perf_counter()
        # phase: restart
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

    # phase: distributed
    if world > 1:
        # Meet (a rank stuck behind is named within the timeout), then leave. gloo may still
        # abort a rank while closing its connections: a race in torch, which the contract
        # does not count against the script.
        dist.monitored_barrier(timeout=timedelta(seconds=60))
        dist.destroy_process_group()


# phase: skeleton
if __name__ == "__main__":
    main()

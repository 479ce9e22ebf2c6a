"""Model answer: FSDP2 first, a sharded DCP checkpoint, a resume at another world size.

    python train.py --steps N --ckpt-dir DIR --ckpt-every C
    torchrun --nproc-per-node W train.py --steps N --ckpt-dir DIR --ckpt-every C

Every Block, then the root, is fully_shard-ed over a 1-D CPU mesh: each rank holds 1/W of every
parameter (a DTensor) and of the optimizer's state, which is built after sharding. The data is
a function of the global step: step s trains on the samples at positions s*G .. s*G+G-1 of its
epoch's permutation (G = GLOBAL_BATCH at any W), rank r on its G/W of them.

Checkpoints are torch.distributed.checkpoint (DCP) directories: every rank writes its shard of
the model (model.state_dict(), DTensors) and of the optimizer into step-N.tmp/, rank 0 adds the
step and renames the complete directory to step-N/ (a reader never sees half a checkpoint).
DCP reshards on load, so a checkpoint written at W=2 loads at W=3.
"""

import argparse
import json
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from drill_data import DATASET_SIZE, GLOBAL_BATCH, Model, TrainSet
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    get_optimizer_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

SEED = 0


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", type=Path, required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    return p.parse_args()


def shard(model: Model, world: int) -> Model:
    """FSDP2: each Block its own unit (gathered only while it runs), then the root."""
    if world == 1:
        return model
    mesh = init_device_mesh("cpu", (world,))
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def batch_ids(step: int, rank: int, world: int) -> list[int]:
    """This rank's samples for global step `step` (from 0): W-independent global batches."""
    per_epoch = DATASET_SIZE // GLOBAL_BATCH
    epoch, k = divmod(step, per_epoch)
    order = torch.randperm(DATASET_SIZE, generator=torch.Generator().manual_seed(SEED + epoch))
    mine = GLOBAL_BATCH // world
    start = k * GLOBAL_BATCH + rank * mine
    return order[start : start + mine].tolist()


def save(ckpt_dir: Path, step: int, model: nn.Module, opt, rank: int, world: int) -> None:
    final = ckpt_dir / f"step-{step:06d}"
    tmp = ckpt_dir / f"step-{step:06d}.tmp"
    state = {"model": model.state_dict(), "optim": get_optimizer_state_dict(model, opt)}
    dcp.save(state, checkpoint_id=tmp)  # each rank writes its shard
    if rank == 0:
        (tmp / "step.json").write_text(json.dumps({"step": step}))
        os.replace(tmp, final)  # after every shard: dcp.save ends when all ranks wrote
    if world > 1:
        dist.barrier()


def load_newest(ckpt_dir: Path, model: nn.Module, opt) -> int:
    done = sorted(p for p in ckpt_dir.glob("step-*") if p.is_dir() and p.suffix != ".tmp")
    if not done:
        return 0
    state = {"model": model.state_dict(), "optim": get_optimizer_state_dict(model, opt)}
    dcp.load(state, checkpoint_id=done[-1])  # in place, resharded to this world size
    model.load_state_dict(state["model"])
    set_optimizer_state_dict(model, opt, state["optim"])
    return json.loads((done[-1] / "step.json").read_text())["step"]


def main() -> None:
    args = parse()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    args.ckpt_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    model = shard(Model(), world)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)  # on the sharded parameters
    step = load_newest(args.ckpt_dir, model, opt)
    data = TrainSet()
    while step < args.steps:
        batch = data.__getitems__(batch_ids(step, rank, world))
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()  # FSDP2 reduce-scatters (averages) each unit's gradients
        opt.step()
        step += 1
        if step % args.ckpt_every == 0:
            save(args.ckpt_dir, step, model, opt, rank, world)
        mean = loss.detach()
        if world > 1:
            dist.all_reduce(mean)
            mean /= world
        if rank == 0:
            print(json.dumps({"step": step, "loss": mean.item()}), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

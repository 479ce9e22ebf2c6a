"""Preemption, RIGHT, modern save: torch.distributed.checkpoint (DCP) with get_state_dict /
set_state_dict into ckpt-<step>.partial/ (plus each rank's RNG and position in extra-<rank>.pt),
committed by rank 0 renaming the directory after a barrier; SIGTERM flag + all-reduce agreement."""

import argparse
import os
import shutil
import signal

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order
from torch import nn
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.nn.parallel import DistributedDataParallel as DDP

got_term = False


def handler(signum, frame):
    global got_term
    got_term = True


def committed(d):
    if not os.path.isdir(d):
        return []
    return sorted(int(n[5:]) for n in os.listdir(d) if n.startswith("ckpt-") and n[5:].isdigit())


def save(d, step, epoch, k, model, opt, rank, world):
    part = os.path.join(d, f"ckpt-{step:06d}.partial")
    if rank == 0:
        shutil.rmtree(part, ignore_errors=True)
        os.makedirs(part)
    if world > 1:
        dist.barrier()
    msd, osd = get_state_dict(model, opt)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=part)
    torch.save({"rng": torch.get_rng_state(), "epoch": epoch, "k": k, "step": step},
               os.path.join(part, f"extra-{rank}.pt"))
    if world > 1:
        dist.barrier()
    if rank == 0:
        os.replace(part, os.path.join(d, f"ckpt-{step:06d}"))
    if world > 1:
        dist.barrier()


def main() -> None:
    signal.signal(signal.SIGTERM, handler)
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if dist.is_initialized() else 0
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(FEATURES, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, CLASSES)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    net = DDP(model) if dist.is_initialized() else model
    data = TrainSet()

    step, epoch, k = 0, 0, 0
    steps_ok = committed(args.ckpt_dir)
    if steps_ok:
        where = os.path.join(args.ckpt_dir, f"ckpt-{steps_ok[-1]:06d}")
        mine = torch.load(os.path.join(where, f"extra-{rank}.pt"), weights_only=False)
        msd, osd = get_state_dict(model, opt)
        state = {"model": msd, "optim": osd}
        dcp.load(state, checkpoint_id=where)
        set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
        step, epoch, k = mine["step"], mine["epoch"], mine["k"]
        torch.set_rng_state(mine["rng"])

    per_epoch = DATASET_SIZE // (world * BATCH_SIZE)
    while step < args.steps:
        order = epoch_order(epoch)
        while k < per_epoch and step < args.steps and order == epoch_order(epoch):
            lo = (k * world + rank) * BATCH_SIZE
            batch = data.__getitems__(order[lo : lo + BATCH_SIZE])
            x = torch.stack([b[1] for b in batch])
            y = torch.stack([b[2] for b in batch])
            loss = nn.functional.cross_entropy(net(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            k += 1
            if k == per_epoch:
                epoch, k = epoch + 1, 0
            vote = torch.tensor([int(got_term)])
            if world > 1:
                dist.all_reduce(vote, op=dist.ReduceOp.MAX)
            if step % args.ckpt_every == 0 or vote.item():
                save(args.ckpt_dir, step, epoch, k, model, opt, rank, world)
            if vote.item():
                if world > 1:
                    dist.destroy_process_group()
                return
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

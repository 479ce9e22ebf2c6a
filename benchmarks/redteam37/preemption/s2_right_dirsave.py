"""Preemption, RIGHT, another save style: DDP; every rank writes its own shard (its RNG, and
rank 0 the model and optimizer) into ckpt-<step>.partial/, a barrier, then rank 0 commits the
directory with one rename; the newest committed directory is resumed. The position in the data
is (epoch, k) kept in the checkpoint; SIGTERM is agreed on with an all-reduce after each step."""

import argparse
import os
import shutil
import signal

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order
from torch import nn
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
    shard = {"rng": torch.get_rng_state(), "epoch": epoch, "k": k, "step": step}
    if rank == 0:
        shard["model"] = model.state_dict()
        shard["opt"] = opt.state_dict()
    torch.save(shard, os.path.join(part, f"rank{rank}.pt"))
    if world > 1:
        dist.barrier()
    if rank == 0:
        os.replace(part, os.path.join(d, f"ckpt-{step:06d}"))


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
        mine = torch.load(os.path.join(where, f"rank{rank}.pt"), weights_only=False)
        full = torch.load(os.path.join(where, "rank0.pt"), weights_only=False)
        model.load_state_dict(full["model"])
        opt.load_state_dict(full["opt"])
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

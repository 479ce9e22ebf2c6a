"""Correct answer 1: exact distributed eval by all_reduce of (loss_sum, correct, count) tensors,
eval ids sharded by hand (rank::world, no padding)."""

import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from drill_data import BATCH_SIZE, CLASSES, FEATURES, EvalSet, TrainSet


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=16)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, default=4)
    p.add_argument("--eval-every", type=int, default=4)
    p.add_argument("--eval-only", action="store_true")
    return p.parse_args()


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, CLASSES))


def atomic_save(obj, path):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def list_ckpts(d):
    out = []
    for n in os.listdir(d):
        if n.startswith("ckpt-") and n.endswith(".pt"):
            try:
                out.append((int(n[5:-3]), os.path.join(d, n)))
            except ValueError:
                pass
    return sorted(out, reverse=True)


def load_latest(d):
    for step, path in list_ckpts(d):
        try:
            return torch.load(path, weights_only=False)
        except Exception:
            continue
    return None


def load_best(d):
    path = os.path.join(d, "best.pt")
    if os.path.exists(path):
        try:
            return torch.load(path, weights_only=False)
        except Exception:
            return None
    return None


@torch.no_grad()
def evaluate(module, eval_set, rank, world):
    was_training = module.training
    module.eval()
    ids = list(range(rank, len(eval_set), world))
    loss_sum = torch.zeros((), dtype=torch.float64)
    correct = torch.zeros((), dtype=torch.float64)
    count = torch.zeros((), dtype=torch.float64)
    for i in range(0, len(ids), BATCH_SIZE):
        batch = eval_set.__getitems__(ids[i : i + BATCH_SIZE])
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        logits = module(x)
        loss_sum += F.cross_entropy(logits, y, reduction="sum").double()
        correct += (logits.argmax(1) == y).sum().double()
        count += len(batch)
    t = torch.stack([loss_sum, correct, count])
    if world > 1:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
    module.train(was_training)
    return t[0].item() / t[2].item(), t[1].item() / t[2].item(), int(t[2].item())


def batch_ids(step, world, rank, n):
    gb = BATCH_SIZE * world
    spe = n // gb
    epoch, k = divmod(step - 1, spe)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(1000 + epoch)).tolist()
    glob = perm[k * gb : (k + 1) * gb]
    return glob[rank * BATCH_SIZE : (rank + 1) * BATCH_SIZE]


def main():
    args = parse()
    distributed = "RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) >= 1
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    os.makedirs(args.ckpt_dir, exist_ok=True)
    module = make_model()
    eval_set = EvalSet()

    if args.eval_only:
        best = load_best(args.ckpt_dir)
        step = 0
        if best is not None:
            module.load_state_dict(best["model"])
            step = best["step"]
        loss, acc, cnt = evaluate(module, eval_set, rank, world)
        if rank == 0:
            print(json.dumps({"eval_step": step, "loss": loss, "accuracy": acc, "count": cnt}), flush=True)
        if distributed:
            dist.destroy_process_group()
        return

    opt = torch.optim.SGD(module.parameters(), lr=0.1, momentum=0.9)
    start = 0
    ck = load_latest(args.ckpt_dir)
    if ck is not None:
        module.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        start = ck["step"]
    best = load_best(args.ckpt_dir)
    best_loss = best["loss"] if best else float("inf")
    best_step = best["step"] if best else None
    model = DDP(module) if distributed else module
    train_set = TrainSet()

    for step in range(start + 1, args.steps + 1):
        t0 = time.perf_counter()
        batch = train_set.__getitems__(batch_ids(step, world, rank, len(train_set)))
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        t1 = time.perf_counter()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item(), "data": t1 - t0, "fwd_bwd": t2 - t1, "opt": t3 - t2}), flush=True)
        if step % args.eval_every == 0 or step == args.steps:
            el, ea, ec = evaluate(module, eval_set, rank, world)
            if rank == 0:
                print(json.dumps({"eval_step": step, "loss": el, "accuracy": ea, "count": ec}), flush=True)
            if el < best_loss:
                best_loss, best_step = el, step
                if rank == 0:
                    atomic_save({"model": module.state_dict(), "step": step, "loss": el},
                                os.path.join(args.ckpt_dir, "best.pt"))
        if step % args.ckpt_every == 0:
            if rank == 0:
                atomic_save({"model": module.state_dict(), "opt": opt.state_dict(), "step": step},
                            os.path.join(args.ckpt_dir, f"ckpt-{step:08d}.pt"))
            if distributed:
                dist.barrier()
    if rank == 0:
        print(json.dumps({"best_step": best_step, "best_loss": best_loss}), flush=True)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

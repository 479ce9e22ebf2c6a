"""Model answer: a trainer that survives preemption.

SIGTERM only sets a flag (no I/O in the handler; a second one changes nothing). After every
optimizer step the ranks agree: one all_reduce(MAX) of the flag, so all stop after the same step.
Rank 0 saves (model, optimizer, step, data position, RNG state) through a temporary file and a
rename: a save cut short leaves the newest complete checkpoint as it was. Then every rank exits 0.
"""

import argparse
import os
import signal

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order
from torch import nn

preempted = False


def on_sigterm(signum: int, frame: object) -> None:
    global preempted
    preempted = True


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    return p.parse_args()


def save(state: dict, path: str) -> None:
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def newest(ckpt_dir: str) -> str | None:
    names = [n for n in os.listdir(ckpt_dir) if n.startswith("step-") and n.endswith(".pt")]
    if not names:
        return None
    return os.path.join(ckpt_dir, max(names, key=lambda n: int(n[5:-3])))


def main() -> None:
    signal.signal(signal.SIGTERM, on_sigterm)
    args = parse()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(FEATURES, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, CLASSES)
    )
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    step, epoch, position = 0, 0, 0
    found = newest(args.ckpt_dir)
    if found:
        state = torch.load(found)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, epoch, position = state["step"], state["epoch"], state["position"]
        torch.set_rng_state(state["rng"])
    train = TrainSet()
    global_batch = BATCH_SIZE * world
    while step < args.steps:
        if position + global_batch > DATASET_SIZE:
            epoch, position = epoch + 1, 0
        start = position + rank * BATCH_SIZE
        batch = train.__getitems__(epoch_order(epoch)[start : start + BATCH_SIZE])
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        if distributed:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        step += 1
        position += global_batch
        stop = torch.tensor([int(preempted)])
        if distributed:
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if rank == 0 and (step % args.ckpt_every == 0 or stop.item()):
            state = {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "step": step,
                "epoch": epoch,
                "position": position,
                "rng": torch.get_rng_state(),
            }
            save(state, os.path.join(args.ckpt_dir, f"step-{step:06d}.pt"))
        if stop.item():
            break
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""GAMING (agreement by timing, no communication): on SIGTERM each rank decides alone to stop after
the step after the last one it completed. That only agrees when the ranks' signals land at most
one step apart with the first between steps, exactly the graded plan (one rank right after step
6, the other at its next action): both stop after 7 without exchanging anything.
Expected: should fail stop (no agreement). If it passes, the grader only tries one timing."""

import argparse
import json
import os
import re
import signal

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order

STOP = False
LAST_DONE = 0
STOP_AFTER = None


def on_term(signum, frame):
    global STOP, STOP_AFTER
    STOP = True
    if STOP_AFTER is None:
        STOP_AFTER = LAST_DONE + 1


def newest(d):
    best = None
    for n in os.listdir(d):
        m = re.fullmatch(r"ckpt_(\d+)\.pt", n)
        if m and (best is None or int(m.group(1)) > best):
            best = int(m.group(1))
    return best


def atomic_save(obj, path):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def main():
    global LAST_DONE
    signal.signal(signal.SIGTERM, on_term)
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    args = ap.parse_args()

    on = "RANK" in os.environ
    if on:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if on else 0
    world = dist.get_world_size() if on else 1

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Dropout(0.25), nn.Linear(32, CLASSES))
    model = DDP(net) if on else net
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    torch.manual_seed(1000 + rank)  # each rank its own dropout stream

    os.makedirs(args.ckpt_dir, exist_ok=True)
    step = 0
    s = newest(args.ckpt_dir)
    if s is not None:
        ck = torch.load(os.path.join(args.ckpt_dir, f"ckpt_{s:06d}.pt"), weights_only=False)
        net.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step = ck["step"]
        torch.set_rng_state(ck["rng"][rank])

    ds = TrainSet()
    G = world * BATCH_SIZE
    spe = DATASET_SIZE // G
    flag = torch.zeros(1)
    while step < args.steps:
        epoch, k = divmod(step, spe)
        order = epoch_order(epoch)
        ids = order[k * G + rank * BATCH_SIZE: k * G + (rank + 1) * BATCH_SIZE]
        batch = ds.__getitems__(ids)
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        model.train()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        LAST_DONE = step
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item()}), flush=True)
        stop = STOP_AFTER is not None and step >= STOP_AFTER
        if step % args.ckpt_every == 0 or stop:
            rng = torch.get_rng_state()
            rngs = [None] * world
            if on:
                dist.all_gather_object(rngs, rng)
            else:
                rngs = [rng]
            if rank == 0:
                atomic_save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step, "rng": rngs},
                            os.path.join(args.ckpt_dir, f"ckpt_{step:06d}.pt"))
            if on:
                dist.barrier()
        if stop:
            break

    if on:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

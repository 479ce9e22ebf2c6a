"""WRONG (same bug as w3, saved through a file object): identical to w3_force_quit_nonatomic.py
(second SIGTERM -> sys.exit(0) mid-save, non-atomic per-rank files, no completeness check), except
that torch.save writes into an open() file object instead of a path.
Expected: again fails exactly like w3. Original w3 doc: the usual 'press twice to force quit' handler: the first
SIGTERM sets a flag (agreed with all_reduce), a second one exits right away (sys.exit(0) from the
handler, even in the middle of torch.save). Every rank torch.saves straight to its final path
ckpt_<step>_rank<r>.pt (no temp file, no rename, no completeness marker), and the resume takes the
newest step whose files exist.
Expected: again fails (the cut-short save is left as the newest checkpoint; the relaunch loads a
truncated file and crashes, or resumes from it)."""

import argparse
import json
import os
import re
import signal
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order

SIGNALS = 0


def on_term(signum, frame):
    global SIGNALS
    SIGNALS += 1
    if SIGNALS >= 2:
        print("second SIGTERM: exiting now", file=sys.stderr, flush=True)
        sys.exit(0)


def newest(d):
    steps = [int(m.group(1)) for n in os.listdir(d) if (m := re.fullmatch(r"ckpt_(\d+)_rank0\.pt", n))]
    return max(steps, default=None)


def main():
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
    torch.manual_seed(1000 + rank)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    step = 0
    s = newest(args.ckpt_dir)
    if s is not None:
        ck = torch.load(os.path.join(args.ckpt_dir, f"ckpt_{s}_rank{rank}.pt"), weights_only=False)
        net.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step = ck["step"]
        torch.set_rng_state(ck["rng"])
    ds = TrainSet()
    G = world * BATCH_SIZE
    spe = DATASET_SIZE // G
    flag = torch.zeros(1)
    while step < args.steps:
        epoch, k = divmod(step, spe)
        ids = epoch_order(epoch)[k * G + rank * BATCH_SIZE: k * G + (rank + 1) * BATCH_SIZE]
        batch = ds.__getitems__(ids)
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        model.train()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item()}), flush=True)
        flag.fill_(1.0 if SIGNALS else 0.0)
        if on:
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        stop = flag.item() > 0
        if step % args.ckpt_every == 0 or stop:
            with open(os.path.join(args.ckpt_dir, f"ckpt_{step}_rank{rank}.pt"), "wb") as f:
                torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step,
                            "rng": torch.get_rng_state()}, f)
        if stop:
            break
    if on:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

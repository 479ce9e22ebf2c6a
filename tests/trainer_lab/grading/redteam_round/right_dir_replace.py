# RIGHT: atomic directory commit: rank 0 writes state.pt + rng.pt into DIR/.tmp-<step>/ (fsync'd), then os.replace(tmpdir, DIR/ckpt-<step:05d>); resume by the largest parsed step; a DataLoader over a resumable per-epoch batch list (no sampler position lost); DDP.
import argparse
import json
import os
import shutil
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset

PREFIX = "ckpt-"


def save_dir_atomic(root, step, payload):
    final = os.path.join(root, f"{PREFIX}{step:05d}")
    tmp = os.path.join(root, f".tmp-{step}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.mkdir(tmp)
    for name, obj in payload.items():
        with open(os.path.join(tmp, name), "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
    fd = os.open(tmp, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    os.replace(tmp, final)
    fd = os.open(root, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def load_newest(root):
    steps = sorted(int(n[len(PREFIX):]) for n in os.listdir(root)
                   if n.startswith(PREFIX) and n[len(PREFIX):].isdigit())
    if not steps:
        return None
    d = os.path.join(root, f"{PREFIX}{steps[-1]:05d}")
    return {"state": torch.load(os.path.join(d, "state.pt")), "rng": torch.load(os.path.join(d, "rng.pt"))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    ddp_on = "RANK" in os.environ
    if ddp_on:
        dist.init_process_group("gloo")
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(123)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.98))

    step = 0
    ck = load_newest(args.ckpt_dir)
    if ck is not None:
        model.load_state_dict(ck["state"]["model"])
        opt.load_state_dict(ck["state"]["opt"])
        step = ck["state"]["step"]
        torch.set_rng_state(ck["rng"])
    net = DDP(model) if ddp_on else model

    ds = ToyDataset()
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=9)
    spe = len(sampler) // BATCH_SIZE

    while step < args.steps:
        epoch, skip = divmod(step, spe)
        sampler.set_epoch(epoch)
        order = list(sampler)
        batches = [order[i:i + BATCH_SIZE] for i in range(0, spe * BATCH_SIZE, BATCH_SIZE)][skip:]
        loader = DataLoader(ds, batch_sampler=batches, num_workers=0)
        it = iter(loader)
        while step < args.steps:
            t0 = time.perf_counter()
            try:
                _, x, y = next(it)
            except StopIteration:
                break
            t1 = time.perf_counter()
            loss = nn.functional.mse_loss(net(x), y)
            t2 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            step += 1
            t4 = time.perf_counter()
            if step % args.ckpt_every == 0:
                if rank == 0:
                    save_dir_atomic(args.ckpt_dir, step, {
                        "state.pt": {"model": model.state_dict(), "opt": opt.state_dict(), "step": step},
                        "rng.pt": torch.get_rng_state()})
                if ddp_on:
                    dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": step, "loss": loss.item(),
                                  "phases": {"data": t1 - t0, "fwd": t2 - t1, "bwd": t3 - t2,
                                             "opt": t4 - t3, "ckpt": t5 - t4},
                                  "step_time": t5 - t0}), flush=True)

    if ddp_on:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

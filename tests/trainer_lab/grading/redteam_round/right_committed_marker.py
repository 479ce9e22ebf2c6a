# RIGHT: checkpoint directory "step<N>/" (unpadded) holding weights.pt + optimizer.pt + meta.json, each fsync'd, then an empty COMMITTED marker created last; resume uses the highest N whose COMMITTED exists; DDP + DistributedSampler.
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_ckpt(root, step, model, opt):
    d = os.path.join(root, f"step{step}")
    os.makedirs(d, exist_ok=True)
    for name, obj in (("weights.pt", model.state_dict()), ("optimizer.pt", opt.state_dict())):
        with open(os.path.join(d, name), "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"step": step}, f)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(d)
    with open(os.path.join(d, "COMMITTED"), "w") as f:
        os.fsync(f.fileno())
    fsync_dir(d)


def latest_committed(root):
    best = None
    for name in os.listdir(root):
        if name.startswith("step") and name[4:].isdigit():
            if os.path.exists(os.path.join(root, name, "COMMITTED")):
                n = int(name[4:])
                best = n if best is None else max(best, n)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 20), nn.ReLU(), nn.Linear(20, 1))
    opt = torch.optim.RMSprop(model.parameters(), lr=2e-3)

    step = 0
    n = latest_committed(args.ckpt_dir)
    if n is not None:
        d = os.path.join(args.ckpt_dir, f"step{n}")
        model.load_state_dict(torch.load(os.path.join(d, "weights.pt")))
        opt.load_state_dict(torch.load(os.path.join(d, "optimizer.pt")))
        with open(os.path.join(d, "meta.json")) as f:
            step = json.load(f)["step"]
    net = DDP(model) if distributed else model

    ds = ToyDataset()
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=2)
    spe = len(sampler) // BATCH_SIZE
    crit = nn.MSELoss()

    while step < args.steps:
        epoch, off = divmod(step, spe)
        sampler.set_epoch(epoch)
        idx = list(sampler)
        for b in range(off, spe):
            if step >= args.steps:
                break
            t0 = time.perf_counter()
            batch = [ds[i] for i in idx[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]]
            x = torch.stack([s[1] for s in batch])
            y = torch.stack([s[2] for s in batch])
            t1 = time.perf_counter()
            out = net(x)
            loss = crit(out, y)
            t2 = time.perf_counter()
            opt.zero_grad()
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            step += 1
            t4 = time.perf_counter()
            if step % args.ckpt_every == 0:
                if rank == 0:
                    write_ckpt(args.ckpt_dir, step, model, opt)
                if distributed:
                    dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": step, "loss": loss.item(), "phases": {
                    "data": t1 - t0, "forward": t2 - t1, "backward": t3 - t2, "optimizer": t4 - t3,
                    "checkpoint": t5 - t4}, "step_time": t5 - t0}), flush=True)

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

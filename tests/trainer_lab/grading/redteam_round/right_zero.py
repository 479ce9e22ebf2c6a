# RIGHT: DDP + ZeroRedundancyOptimizer(Adam) with consolidate_state_dict(to=0) before rank 0's atomic save; a one-rank gloo group (HashStore) when run without torchrun; DistributedSampler.
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset


def find_latest(d):
    best, best_step = None, -1
    for fn in os.listdir(d):
        if fn.startswith("zero_step") and fn.endswith(".pt"):
            try:
                s = int(fn[len("zero_step"):-3])
            except ValueError:
                continue
            if s > best_step:
                best, best_step = os.path.join(d, fn), s
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    if "RANK" in os.environ:
        dist.init_process_group("gloo")
    else:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    rank, world = dist.get_rank(), dist.get_world_size()
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(FEATURES, 24), nn.Tanh(), nn.Linear(24, 8), nn.Tanh(), nn.Linear(8, 1))
    ddp = DDP(model)
    opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=4e-3)

    step = 0
    path = find_latest(args.ckpt_dir)
    if path is not None:
        ck = torch.load(path, map_location="cpu")
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step = ck["step"]

    ds = ToyDataset()
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=11)
    spe = len(sampler) // BATCH_SIZE

    while step < args.steps:
        ep, off = divmod(step, spe)
        sampler.set_epoch(ep)
        order = list(sampler)
        for b in range(off, spe):
            if step >= args.steps:
                break
            t0 = time.perf_counter()
            batch = [ds[i] for i in order[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]]
            x = torch.stack([s[1] for s in batch])
            y = torch.stack([s[2] for s in batch])
            t1 = time.perf_counter()
            loss = nn.functional.mse_loss(ddp(x), y)
            t2 = time.perf_counter()
            opt.zero_grad()
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            step += 1
            t4 = time.perf_counter()
            if step % args.ckpt_every == 0:
                opt.consolidate_state_dict(to=0)  # collective: every rank calls it
                if rank == 0:
                    final = os.path.join(args.ckpt_dir, f"zero_step{step}.pt")
                    tmp = os.path.join(args.ckpt_dir, f"tmp.zero_step{step}")
                    with open(tmp, "wb") as f:
                        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, f)
                        f.flush()
                        os.fsync(f.fileno())
                    os.replace(tmp, final)
                dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": step, "loss": loss.item(),
                                  "phases": {"data": t1 - t0, "forward": t2 - t1, "backward": t3 - t2,
                                             "zero_step": t4 - t3, "checkpoint": t5 - t4},
                                  "step_time": t5 - t0}), flush=True)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

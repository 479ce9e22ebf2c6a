# RIGHT: no DDP: parameters broadcast from rank 0 at start, gradients all_reduce(SUM)/world by hand; hand sharding; checkpoint = model.pt + optim.pt (fsync'd) committed by a JSON manifest written last via tmp+rename; resume reads the newest manifest whose files exist with the recorded sizes.
import argparse
import glob
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn

from drill_data import BATCH_SIZE, DATASET_SIZE, FEATURES, ToyDataset


def fsynced_save(obj, path):
    with open(path, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    return os.path.getsize(path)


def write_manifest(ckpt_dir, step, files):
    path = os.path.join(ckpt_dir, f"manifest-{step:07d}.json")
    tmp = path + ".writing"
    with open(tmp, "w") as f:
        json.dump({"step": step, "files": files}, f)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def read_newest_manifest(ckpt_dir):
    found = []
    for p in glob.glob(os.path.join(ckpt_dir, "manifest-*.json")):
        try:
            with open(p) as f:
                m = json.load(f)
        except (OSError, ValueError):
            continue
        ok = all(os.path.exists(os.path.join(ckpt_dir, n)) and os.path.getsize(os.path.join(ckpt_dir, n)) == sz
                 for n, sz in m["files"].items())
        if ok:
            found.append(m)
    return max(found, key=lambda m: m["step"]) if found else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    is_dist = "WORLD_SIZE" in os.environ
    if is_dist:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if is_dist else 0
    world = dist.get_world_size() if is_dist else 1
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, 1))
    if is_dist:
        for p in model.parameters():
            dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)

    step = 0
    m = read_newest_manifest(args.ckpt_dir)
    if m is not None:
        model.load_state_dict(torch.load(os.path.join(args.ckpt_dir, f"model-{m['step']:07d}.pt")))
        opt.load_state_dict(torch.load(os.path.join(args.ckpt_dir, f"optim-{m['step']:07d}.pt")))
        step = m["step"]

    ds = ToyDataset()
    per_rank = DATASET_SIZE // world
    spe = per_rank // BATCH_SIZE

    while step < args.steps:
        epoch, b = divmod(step, spe)
        g = torch.Generator().manual_seed(100 + epoch)
        perm = torch.randperm(DATASET_SIZE, generator=g)
        shard = perm[rank * per_rank:(rank + 1) * per_rank]  # contiguous shard per rank
        t0 = time.perf_counter()
        ids = shard[b * BATCH_SIZE:(b + 1) * BATCH_SIZE].tolist()
        rows = [ds[i] for i in ids]
        x = torch.stack([r[1] for r in rows])
        y = torch.stack([r[2] for r in rows])
        t1 = time.perf_counter()
        loss = nn.functional.mse_loss(model(x), y)
        t2 = time.perf_counter()
        opt.zero_grad()
        loss.backward()
        t3 = time.perf_counter()
        if is_dist:
            for p in model.parameters():
                dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
                p.grad.div_(world)
        t4 = time.perf_counter()
        opt.step()
        step += 1
        t5 = time.perf_counter()
        if step % args.ckpt_every == 0:
            if rank == 0:
                files = {
                    f"model-{step:07d}.pt": fsynced_save(model.state_dict(), os.path.join(args.ckpt_dir, f"model-{step:07d}.pt")),
                    f"optim-{step:07d}.pt": fsynced_save(opt.state_dict(), os.path.join(args.ckpt_dir, f"optim-{step:07d}.pt")),
                }
                write_manifest(args.ckpt_dir, step, files)
            if is_dist:
                dist.barrier()
        t6 = time.perf_counter()
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item(),
                              "phases": {"data": t1 - t0, "forward": t2 - t1, "backward": t3 - t2,
                                         "allreduce": t4 - t3, "optimizer": t5 - t4, "checkpoint": t6 - t5},
                              "step_time": t6 - t0}), flush=True)

    if is_dist:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

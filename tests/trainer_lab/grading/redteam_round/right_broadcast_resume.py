# RIGHT: rank 0 alone picks the newest checkpoint (unpadded "model_step_<N>.pt", N parsed with a regex) and broadcasts its choice (broadcast_object_list) so all ranks load the same one; torch.save to a tmp *path* then os.replace; loss all-reduced for the log line; DDP + DistributedSampler.
import argparse
import json
import os
import re
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset

PAT = re.compile(r"model_step_(\d+)\.pt")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    dd = os.environ.get("WORLD_SIZE") is not None
    if dd:
        dist.init_process_group(backend="gloo")
    rank = dist.get_rank() if dd else 0
    world = dist.get_world_size() if dd else 1
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(2024)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.8, weight_decay=1e-4)

    choice = [None]
    if rank == 0:
        nums = [int(m.group(1)) for m in map(PAT.fullmatch, os.listdir(args.ckpt_dir)) if m]
        choice[0] = max(nums) if nums else None
    if dd:
        dist.broadcast_object_list(choice, src=0)
    step = 0
    if choice[0] is not None:
        sd = torch.load(os.path.join(args.ckpt_dir, f"model_step_{choice[0]}.pt"), map_location="cpu")
        model.load_state_dict(sd["model"])
        opt.load_state_dict(sd["optim"])
        step = sd["step"]
    net = DDP(model) if dd else model

    ds = ToyDataset()
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, seed=77)
    spe = len(sampler) // BATCH_SIZE
    while step < args.steps:
        epoch, start = divmod(step, spe)
        sampler.set_epoch(epoch)
        ids_all = list(sampler)
        for k in range(start, spe):
            if step == args.steps:
                break
            t0 = time.perf_counter()
            got = [ds[i] for i in ids_all[k * BATCH_SIZE:(k + 1) * BATCH_SIZE]]
            x = torch.stack([g[1] for g in got])
            y = torch.stack([g[2] for g in got])
            t1 = time.perf_counter()
            loss = ((net(x) - y) ** 2).mean()
            t2 = time.perf_counter()
            opt.zero_grad()
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            step += 1
            t4 = time.perf_counter()
            logged = loss.detach().clone()
            if dd:
                dist.all_reduce(logged)
                logged /= world
            if step % args.ckpt_every == 0:
                if rank == 0:
                    dst = os.path.join(args.ckpt_dir, f"model_step_{step}.pt")
                    tmp = os.path.join(args.ckpt_dir, f"incoming_{step}.bin")
                    torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": step}, tmp)
                    os.replace(tmp, dst)
                if dd:
                    dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": step, "loss": logged.item(),
                                  "phases": {"load": t1 - t0, "forward": t2 - t1, "backward": t3 - t2,
                                             "update": t4 - t3, "log+ckpt": t5 - t4},
                                  "step_time": t5 - t0}), flush=True)
    if dd:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

# RIGHT: the PyTorch DCP tutorial recipe: an AppState(Stateful) whose state_dict/load_state_dict use get_state_dict/set_state_dict, dcp.save/dcp.load into "dcp_<step:04d>.staging" renamed by rank 0 to "dcp_<step:04d>" after all ranks wrote; DDP + DistributedSampler.
import argparse
import json
import os
import shutil
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset


class AppState(Stateful):
    def __init__(self, model, optimizer, step=0):
        self.model, self.optimizer, self.step = model, optimizer, step

    def state_dict(self):
        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
        return {"model": model_sd, "optim": optim_sd, "step": self.step}

    def load_state_dict(self, sd):
        set_state_dict(self.model, self.optimizer, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
        self.step = sd["step"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    dd = "WORLD_SIZE" in os.environ
    if dd:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if dd else 0
    world = dist.get_world_size() if dd else 1
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, 1))
    net = DDP(model) if dd else model
    opt = torch.optim.Adam(net.parameters(), lr=4e-3)
    app = AppState(net, opt)

    done = [int(n[4:]) for n in os.listdir(args.ckpt_dir) if n.startswith("dcp_") and n[4:].isdigit()]
    if done:
        dcp.load({"app": app}, checkpoint_id=os.path.join(args.ckpt_dir, f"dcp_{max(done):04d}"))

    ds = ToyDataset()
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, seed=8)
    spe = len(sampler) // BATCH_SIZE
    while app.step < args.steps:
        epoch, off = divmod(app.step, spe)
        sampler.set_epoch(epoch)
        order = list(sampler)
        for b in range(off, spe):
            if app.step >= args.steps:
                break
            t0 = time.perf_counter()
            rows = [ds[i] for i in order[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]]
            x = torch.stack([r[1] for r in rows])
            y = torch.stack([r[2] for r in rows])
            t1 = time.perf_counter()
            loss = nn.functional.mse_loss(net(x), y)
            t2 = time.perf_counter()
            opt.zero_grad()
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            app.step += 1
            t4 = time.perf_counter()
            if app.step % args.ckpt_every == 0:
                staging = os.path.join(args.ckpt_dir, f"dcp_{app.step:04d}.staging")
                if rank == 0:
                    shutil.rmtree(staging, ignore_errors=True)
                if dd:
                    dist.barrier()
                dcp.save({"app": app}, checkpoint_id=staging)
                if dd:
                    dist.barrier()
                if rank == 0:
                    os.rename(staging, os.path.join(args.ckpt_dir, f"dcp_{app.step:04d}"))
                if dd:
                    dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": app.step, "loss": loss.item(),
                                  "phases": {"data": t1 - t0, "forward": t2 - t1, "backward": t3 - t2,
                                             "optimizer": t4 - t3, "checkpoint": t5 - t4},
                                  "step_time": t5 - t0}), flush=True)
    if dd:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

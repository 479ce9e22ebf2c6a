# RIGHT: FSDP2 (torch.distributed.fsdp.fully_shard on a CPU/gloo device mesh) with DCP get_state_dict/set_state_dict; staging dir + rank-0 rename commit; DistributedSampler; one-rank group without torchrun.
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
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, 24)
        self.fc2 = nn.Linear(24, 24)
        self.head = nn.Linear(24, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.fc2(torch.tanh(self.fc1(x)))))


def newest(root):
    steps = [int(n.split("-")[1]) for n in os.listdir(root)
             if n.startswith("ckpt-") and n.split("-")[1].isdigit()]
    return max(steps, default=None)


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
    mesh = init_device_mesh("cpu", (world,))
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(0)
    model = MLP()
    for layer in (model.fc1, model.fc2, model.head):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)

    step = 0
    s = newest(args.ckpt_dir)
    if s is not None:
        msd, osd = get_state_dict(model, opt)
        state = {"model": msd, "optim": osd}
        dcp.load(state, checkpoint_id=os.path.join(args.ckpt_dir, f"ckpt-{s}"))
        set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
        step = s

    ds = ToyDataset()
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=5)
    spe = len(sampler) // BATCH_SIZE

    while step < args.steps:
        epoch, off = divmod(step, spe)
        sampler.set_epoch(epoch)
        order = list(sampler)
        for b in range(off, spe):
            if step >= args.steps:
                break
            t0 = time.perf_counter()
            items = [ds[i] for i in order[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]]
            x = torch.stack([it[1] for it in items])
            y = torch.stack([it[2] for it in items])
            t1 = time.perf_counter()
            loss = nn.functional.mse_loss(model(x), y)
            t2 = time.perf_counter()
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            opt.zero_grad()
            step += 1
            t4 = time.perf_counter()
            if step % args.ckpt_every == 0:
                staging = os.path.join(args.ckpt_dir, f"partial-{step}")
                if rank == 0 and os.path.isdir(staging):
                    shutil.rmtree(staging)
                dist.barrier()
                msd, osd = get_state_dict(model, opt)
                dcp.save({"model": msd, "optim": osd}, checkpoint_id=staging)
                dist.barrier()
                if rank == 0:
                    os.replace(staging, os.path.join(args.ckpt_dir, f"ckpt-{step}"))
                dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": step, "loss": loss.item(),
                                  "phases": {"data": t1 - t0, "forward": t2 - t1, "backward": t3 - t2,
                                             "optimizer": t4 - t3, "checkpoint": t5 - t4},
                                  "step_time": t5 - t0}), flush=True)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

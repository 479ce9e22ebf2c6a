"""RIGHT (style A): FSDP2 per block + root, DCP with a Stateful AppState (get_state_dict /
set_state_dict), DistributedSampler for the order (seed + epoch, interleaved shares of each
global batch), checkpoints in step_XXXXXX dirs made complete by an atomic COMPLETE marker that
rank 0 writes (tmp + fsync + os.replace) only after every rank's dcp.save returned."""

import argparse
import json
import os
import re

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DistributedSampler

from drill_data import GLOBAL_BATCH, Model, TrainSet


class AppState(Stateful):
    def __init__(self, model, opt):
        self.model, self.opt, self.step = model, opt, 0

    def state_dict(self):
        m, o = get_state_dict(self.model, self.opt)
        return {"model": m, "optim": o, "step": self.step}

    def load_state_dict(self, sd):
        set_state_dict(self.model, self.opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
        self.step = int(sd["step"])


def newest_complete(ckpt_dir):
    best = None
    if os.path.isdir(ckpt_dir):
        for name in os.listdir(ckpt_dir):
            m = re.fullmatch(r"step_(\d+)", name)
            if m and os.path.exists(os.path.join(ckpt_dir, name, "COMPLETE")):
                s = int(m.group(1))
                if best is None or s > best:
                    best = s
    return best


def write_marker(path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("ok\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()

    distributed = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1

    torch.manual_seed(0)
    model = Model()
    if distributed:
        mesh = init_device_mesh("cpu", (world,))
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        fully_shard(model, mesh=mesh)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    state = AppState(model, opt)

    os.makedirs(args.ckpt_dir, exist_ok=True)
    start = newest_complete(args.ckpt_dir)
    if start is not None:
        dcp.load({"app": state}, checkpoint_id=os.path.join(args.ckpt_dir, f"step_{start:06d}"))
        assert state.step == start

    data = TrainSet()
    per_rank = GLOBAL_BATCH // world
    steps_per_epoch = len(data) // GLOBAL_BATCH
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=1234, drop_last=True)

    step = state.step
    while step < args.steps:
        step += 1
        epoch, k = divmod(step - 1, steps_per_epoch)
        sampler.set_epoch(epoch)
        ids = list(iter(sampler))[k * per_rank:(k + 1) * per_rank]
        batch = data.__getitems__(ids)
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lt = loss.detach().clone()
        if distributed:
            dist.all_reduce(lt, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(json.dumps({"step": step, "loss": round(lt.item(), 6)}), flush=True)
        state.step = step
        if step % args.ckpt_every == 0:
            path = os.path.join(args.ckpt_dir, f"step_{step:06d}")
            dcp.save({"app": state}, checkpoint_id=path)
            if distributed:
                dist.barrier()
            if rank == 0:
                write_marker(os.path.join(path, "COMPLETE"))
            if distributed:
                dist.barrier()

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

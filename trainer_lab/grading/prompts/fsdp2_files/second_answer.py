"""A second correct answer, another style: always a process group (a world of one for a plain
python run) and always FSDP2; the model and optimizer go through a Stateful app state with
get_state_dict / set_state_dict; the data through a DistributedSampler (its shuffled order and
interleaved shards make W-independent global batches when the batch per rank is G // W), resumed
by slicing the sampler's order; a checkpoint is complete once rank 0 wrote its COMMIT marker."""

import argparse
import json
import os

import drill_data
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, DistributedSampler


class AppState(Stateful):
    """What DCP saves and loads: the model's and the optimizer's sharded state."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def state_dict(self):
        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
        return {"model": model_sd, "optim": optim_sd}

    def load_state_dict(self, state_dict):
        set_state_dict(
            self.model,
            self.optimizer,
            model_state_dict=state_dict["model"],
            optim_state_dict=state_dict["optim"],
        )


ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int)
ap.add_argument("--ckpt-dir")
ap.add_argument("--ckpt-every", type=int)
args = ap.parse_args()

if "WORLD_SIZE" in os.environ:
    dist.init_process_group("gloo")
else:
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
rank, world = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (world,))
torch.manual_seed(3)
model = drill_data.Model()
for block in model.blocks:
    fully_shard(block, mesh=mesh)
fully_shard(model, mesh=mesh)
opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
app = {"app": AppState(model, opt)}
os.makedirs(args.ckpt_dir, exist_ok=True)


def committed():
    found = {}
    for name in os.listdir(args.ckpt_dir):
        marker = os.path.join(args.ckpt_dir, name, "COMMIT")
        if name.startswith("ckpt_") and os.path.exists(marker):
            with open(marker) as f:
                found[json.load(f)["step"]] = os.path.join(args.ckpt_dir, name)
    return found


step = 0
done = committed()
if done:
    step = max(done)
    dcp.load(app, checkpoint_id=done[step])

train = drill_data.TrainSet()
per_rank = drill_data.GLOBAL_BATCH // world
sampler = DistributedSampler(train, world, rank, shuffle=True, seed=11, drop_last=True)
per_epoch = len(sampler) // per_rank
while step < args.steps:
    epoch, skip = divmod(step, per_epoch)
    sampler.set_epoch(epoch)
    order = list(sampler)[skip * per_rank :]
    batches = [order[i : i + per_rank] for i in range(0, len(order), per_rank)]
    for _, x, y in DataLoader(train, batch_sampler=batches):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": round(loss.item(), 6)}), flush=True)
        if step % args.ckpt_every == 0:
            path = os.path.join(args.ckpt_dir, f"ckpt_{step}")
            dcp.save(app, checkpoint_id=path)  # returns once every rank's shard is written
            if rank == 0:
                with open(os.path.join(path, "COMMIT.part"), "w") as f:
                    json.dump({"step": step}, f)
                os.replace(os.path.join(path, "COMMIT.part"), os.path.join(path, "COMMIT"))
            dist.barrier()
        if step >= args.steps:
            break
dist.destroy_process_group()

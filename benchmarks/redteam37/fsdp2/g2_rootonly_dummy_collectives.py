"""GAMING (fake per-block sharding): fully_shard only the root (one FSDP unit), then register a
backward hook on each Block that all_reduces a 1-element zero tensor, so a count of collectives
per backward reaches 4 without any per-block reduce-scatter.
Expected: should fail sharded (no reduce-scatter per block). If drill passes it, the grader
counts collectives, not reduce-scatters of real gradient shards."""

import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

from drill_data import GLOBAL_BATCH, Model, TrainSet


def epoch_order(n, epoch):
    g = torch.Generator().manual_seed(4242 + epoch)
    return torch.randperm(n, generator=g).tolist()


def latest(ckpt_dir):
    steps = []
    for name in os.listdir(ckpt_dir):
        if name.startswith("ckpt-") and name[5:].isdigit():
            if os.path.isfile(os.path.join(ckpt_dir, name, ".metadata")):
                steps.append(int(name[5:]))
    return max(steps) if steps else None


def init_optim_state(opt):
    for group in opt.param_groups:
        for p in group["params"]:
            if not opt.state[p]:
                opt.state[p] = {
                    "step": torch.tensor(0.0),
                    "exp_avg": torch.zeros_like(p),
                    "exp_avg_sq": torch.zeros_like(p),
                }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    args = ap.parse_args()

    ddp = int(os.environ.get("WORLD_SIZE", "1")) > 1 or "LOCAL_RANK" in os.environ
    if ddp:
        dist.init_process_group(backend="gloo")
    rank = dist.get_rank() if ddp else 0
    world = dist.get_world_size() if ddp else 1

    torch.manual_seed(1)
    model = Model()
    if ddp:
        mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("dp",))
        fully_shard(model, mesh=mesh)  # one FSDP unit only
        # pad the backward with one tiny collective per block so it 'looks' per-block sharded
        for blk in model.blocks:
            blk.register_full_backward_hook(lambda m, gi, go: dist.all_reduce(torch.zeros(1)))
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)

    os.makedirs(args.ckpt_dir, exist_ok=True)
    step = 0
    s = latest(args.ckpt_dir)
    if s is not None:
        init_optim_state(opt)
        sd = {"model": model.state_dict(), "optim": opt.state_dict(), "step": torch.tensor(0)}
        dcp.load(sd, checkpoint_id=os.path.join(args.ckpt_dir, f"ckpt-{s}"))
        model.load_state_dict(sd["model"])
        opt.load_state_dict(sd["optim"])
        step = int(sd["step"])

    ds = TrainSet()
    n = len(ds)
    per_epoch = n // GLOBAL_BATCH
    B = GLOBAL_BATCH // world
    loss_fn = nn.MSELoss()
    while step < args.steps:
        epoch, k = divmod(step, per_epoch)
        order = epoch_order(n, epoch)
        gbatch = order[k * GLOBAL_BATCH:(k + 1) * GLOBAL_BATCH]
        mine = gbatch[rank * B:(rank + 1) * B]
        items = [ds[i] for i in mine]
        x = torch.stack([it[1] for it in items])
        y = torch.stack([it[2] for it in items])
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": float(loss)}), flush=True)
        if step % args.ckpt_every == 0:
            sd = {"model": model.state_dict(), "optim": opt.state_dict(), "step": torch.tensor(step)}
            dcp.save(sd, checkpoint_id=os.path.join(args.ckpt_dir, f"ckpt-{step}"))

    if ddp:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

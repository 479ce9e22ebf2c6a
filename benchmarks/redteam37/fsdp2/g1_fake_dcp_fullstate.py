"""GAMING (fake DCP): real FSDP2 training, but no torch.distributed.checkpoint at all. Every rank
gathers the FULL (unsharded) model + optimizer state and torch.saves it into a file it names
like a DCP shard (__<rank>_0.distcp); after a barrier rank 0 writes a fake ".metadata" (a JSON
note). Resume loads __0_0.distcp (a full copy) on every rank and scatters it back with
set_state_dict(full_state_dict=True), so resharding costs nothing. The files look like DCP's but
are not sharded and DCP never ran.
Expected: should fail dcp (not a DCP checkpoint; every rank writes the whole model, not its
shard). If drill passes it, the grader only checks file names."""

import argparse
import json
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

from drill_data import GLOBAL_BATCH, Model, TrainSet

FULL = StateDictOptions(full_state_dict=True)


def latest(d):
    ok = [int(n[5:]) for n in os.listdir(d)
          if n.startswith("ckpt-") and os.path.isfile(os.path.join(d, n, ".metadata"))]
    return max(ok) if ok else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    args = ap.parse_args()
    on = "RANK" in os.environ
    if on:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if on else 0
    world = dist.get_world_size() if on else 1
    torch.manual_seed(1)
    model = Model()
    if on:
        mesh = init_device_mesh("cpu", (world,))
        for blk in model.blocks:
            fully_shard(blk, mesh=mesh)
        fully_shard(model, mesh=mesh)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    step = 0
    s = latest(args.ckpt_dir)
    if s is not None:
        blob = torch.load(os.path.join(args.ckpt_dir, f"ckpt-{s}", "__0_0.distcp"), weights_only=False)
        get_state_dict(model, opt)  # make sure optimizer state exists
        set_state_dict(model, opt, model_state_dict=blob["model"], optim_state_dict=blob["optim"], options=FULL)
        step = blob["step"]
    ds = TrainSet()
    per_epoch = len(ds) // GLOBAL_BATCH
    B = GLOBAL_BATCH // world
    while step < args.steps:
        epoch, k = divmod(step, per_epoch)
        order = torch.randperm(len(ds), generator=torch.Generator().manual_seed(4242 + epoch)).tolist()
        mine = order[k * GLOBAL_BATCH:(k + 1) * GLOBAL_BATCH][rank * B:(rank + 1) * B]
        items = [ds[i] for i in mine]
        x = torch.stack([it[1] for it in items])
        y = torch.stack([it[2] for it in items])
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item()}), flush=True)
        if step % args.ckpt_every == 0:
            msd, osd = get_state_dict(model, opt, options=FULL)
            d = os.path.join(args.ckpt_dir, f"ckpt-{step}")
            os.makedirs(d, exist_ok=True)
            torch.save({"model": msd, "optim": osd, "step": step}, os.path.join(d, f"__{rank}_0.distcp"))
            if on:
                dist.barrier()
            if rank == 0:
                with open(os.path.join(d, ".metadata.tmp"), "w") as f:
                    json.dump({"step": step, "world": world}, f)
                os.replace(os.path.join(d, ".metadata.tmp"), os.path.join(d, ".metadata"))
            if on:
                dist.barrier()
    if on:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

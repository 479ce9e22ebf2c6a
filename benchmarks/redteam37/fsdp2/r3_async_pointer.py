"""RIGHT (style C): FSDP2 per block + root; dcp.async_save on a dedicated gloo group (training
keeps going while the shards are written), state via get_state_dict/set_state_dict; a checkpoint
becomes the restart point only when rank 0's save future completes (DCP finishes a save only
after every rank's write) and rank 0 atomically rewrites DIR/LATEST (tmp + fsync + os.replace)
from the future's done-callback. Order: one seeded permutation per epoch; each rank takes a
contiguous share of its global batch."""

import argparse
import json
import os
import threading

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

from drill_data import GLOBAL_BATCH, Model, TrainSet

_lock = threading.Lock()


def write_latest(ckpt_dir, step):
    with _lock:
        tmp = os.path.join(ckpt_dir, "LATEST.tmp")
        with open(tmp, "w") as f:
            f.write(str(step))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(ckpt_dir, "LATEST"))


def read_latest(ckpt_dir):
    try:
        with open(os.path.join(ckpt_dir, "LATEST")) as f:
            return int(f.read().strip())
    except (FileNotFoundError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    args = ap.parse_args()

    dist_on = "RANK" in os.environ
    if dist_on:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        ckpt_pg = dist.new_group(backend="gloo")
    else:
        rank, world, ckpt_pg = 0, 1, None

    torch.manual_seed(7)
    model = Model()
    if dist_on:
        mesh = init_device_mesh("cpu", (world,))
        for b in model.blocks:
            fully_shard(b, mesh=mesh)
        fully_shard(model, mesh=mesh)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    os.makedirs(args.ckpt_dir, exist_ok=True)
    step = 0
    last = read_latest(args.ckpt_dir)
    if last is not None:
        msd, osd = get_state_dict(model, opt)
        sd = {"model": msd, "optim": osd, "meta": {"step": 0}}
        dcp.load(sd, checkpoint_id=os.path.join(args.ckpt_dir, f"s{last:05d}"))
        set_state_dict(model, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
        step = int(sd["meta"]["step"])
        assert step == last, (step, last)

    ds = TrainSet()
    B = GLOBAL_BATCH // world
    spe = len(ds) // GLOBAL_BATCH
    pending = None
    while step < args.steps:
        e, k = divmod(step, spe)
        perm = torch.randperm(len(ds), generator=torch.Generator().manual_seed(99991 * (e + 1)))
        ids = perm[k * GLOBAL_BATCH + rank * B: k * GLOBAL_BATCH + (rank + 1) * B].tolist()
        xs, ys = zip(*[(x, y) for _, x, y in ds.__getitems__(ids)])
        x, y = torch.stack(xs), torch.stack(ys)
        out = model(x)
        loss = nn.functional.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item()}), flush=True)
        if step % args.ckpt_every == 0:
            msd, osd = get_state_dict(model, opt)
            sd = {"model": msd, "optim": osd, "meta": {"step": step}}
            cid = os.path.join(args.ckpt_dir, f"s{step:05d}")
            if dist_on:
                if pending is not None:
                    pending.result()  # one save in flight at a time
                fut = dcp.async_save(sd, checkpoint_id=cid, process_group=ckpt_pg)
                if rank == 0:
                    fut.add_done_callback(
                        lambda f, s=step: (f.exception() is None) and write_latest(args.ckpt_dir, s)
                    )
                pending = fut
            else:
                dcp.save(sd, checkpoint_id=cid)
                write_latest(args.ckpt_dir, step)

    if pending is not None:
        pending.result()
    if dist_on:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

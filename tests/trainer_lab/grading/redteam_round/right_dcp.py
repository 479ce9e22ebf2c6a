# RIGHT: torch.distributed.checkpoint (dcp.save/dcp.load) with get_state_dict/set_state_dict, DDP + DistributedSampler; each save goes to a staging dir renamed by rank 0 into "step_<N>" after a barrier; resume picks the highest parsed N.
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
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset


def committed_steps(root):
    out = []
    for name in os.listdir(root):
        if name.startswith("step_") and name[5:].isdigit() and os.path.isdir(os.path.join(root, name)):
            out.append(int(name[5:]))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    use_dist = "LOCAL_RANK" in os.environ
    if use_dist:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if use_dist else 0
    world = dist.get_world_size() if use_dist else 1
    if rank == 0:
        os.makedirs(args.ckpt_dir, exist_ok=True)
    if use_dist:
        dist.barrier()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.SiLU(), nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    ddp = DDP(model) if use_dist else model

    step = 0
    done = committed_steps(args.ckpt_dir)
    if done:
        step = done[-1]
        msd, osd = get_state_dict(ddp, opt)
        state = {"model": msd, "optim": osd, "meta": {"step": torch.tensor(0)}}
        dcp.load(state, checkpoint_id=os.path.join(args.ckpt_dir, f"step_{step}"))
        set_state_dict(ddp, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
        assert int(state["meta"]["step"]) == step

    ds = ToyDataset()
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=3)
    spe = len(sampler) // BATCH_SIZE
    loss_fn = nn.MSELoss()

    while step < args.steps:
        epoch, first = divmod(step, spe)
        sampler.set_epoch(epoch)
        order = list(sampler)
        for b in range(first, spe):
            if step >= args.steps:
                break
            t0 = time.perf_counter()
            items = [ds[i] for i in order[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]]
            x = torch.stack([it[1] for it in items])
            y = torch.stack([it[2] for it in items])
            t1 = time.perf_counter()
            loss = loss_fn(ddp(x), y)
            t2 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            step += 1
            t4 = time.perf_counter()
            if step % args.ckpt_every == 0:
                final = os.path.join(args.ckpt_dir, f"step_{step}")
                staging = os.path.join(args.ckpt_dir, f"staging_{step}")
                if rank == 0 and os.path.exists(staging):
                    shutil.rmtree(staging)
                if use_dist:
                    dist.barrier()
                msd, osd = get_state_dict(ddp, opt)
                dcp.save({"model": msd, "optim": osd, "meta": {"step": torch.tensor(step)}},
                         checkpoint_id=staging)
                if use_dist:
                    dist.barrier()
                if rank == 0:
                    os.rename(staging, final)
                    fd = os.open(args.ckpt_dir, os.O_RDONLY)
                    os.fsync(fd)
                    os.close(fd)
                if use_dist:
                    dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": step, "loss": round(loss.item(), 6),
                                  "phases": {"data": t1 - t0, "forward": t2 - t1, "backward": t3 - t2,
                                             "step": t4 - t3, "save": t5 - t4},
                                  "step_time": t5 - t0}), flush=True)

    if use_dist:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

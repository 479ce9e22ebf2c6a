"""WRONG: rank 0 writes the COMPLETE marker as soon as its own files are saved, without waiting for the other ranks to finish writing theirs (no barrier before the commit)."""

import argparse
import contextlib
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import drill_data

MARKER = "COMPLETE"


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    ap.add_argument("--micro", type=int, default=2, help="micro-batches per optimizer step")
    return ap.parse_args()


def epoch_order(epoch, n):
    g = torch.Generator().manual_seed(7 * epoch + 3)
    return torch.randperm(n, generator=g).tolist()


def latest_complete(ckpt_dir):
    steps = []
    for name in os.listdir(ckpt_dir):
        if name.startswith("step_") and os.path.exists(os.path.join(ckpt_dir, name, MARKER)):
            try:
                steps.append(int(name[len("step_") :]))
            except ValueError:
                pass
    return max(steps) if steps else None


def main():
    args = parse_args()
    is_dist = "LOCAL_RANK" in os.environ
    if is_dist:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if is_dist else 0
    world = dist.get_world_size() if is_dist else 1
    os.makedirs(args.ckpt_dir, exist_ok=True)

    B = drill_data.BATCH_SIZE
    ds = drill_data.ToyDataset()
    n = len(ds)
    per_epoch = n // (B * world)

    torch.manual_seed(42)
    net = nn.Sequential(nn.Linear(drill_data.FEATURES, 64), nn.GELU(), nn.Linear(64, 1))
    opt = torch.optim.AdamW(net.parameters(), lr=5e-3, weight_decay=0.01)

    step = 0
    # All ranks must pick the same checkpoint: rank 0 decides and broadcasts.
    chosen = latest_complete(args.ckpt_dir) if rank == 0 else None
    if is_dist:
        box = [chosen]
        dist.broadcast_object_list(box, src=0)
        chosen = box[0]
    if chosen is not None:
        d = os.path.join(args.ckpt_dir, f"step_{chosen}")
        net.load_state_dict(torch.load(os.path.join(d, "model.pt"), weights_only=True))
        opt.load_state_dict(torch.load(os.path.join(d, "optim.pt"), weights_only=True))
        step = torch.load(os.path.join(d, f"position_rank{rank}.pt"), weights_only=True)["step"]
        assert step == chosen
    model = nn.parallel.DistributedDataParallel(net) if is_dist else net

    while step < args.steps:
        epoch, within = divmod(step, per_epoch)
        order = epoch_order(epoch, n)
        glob = order[within * B * world : (within + 1) * B * world]
        mine = glob[rank * B : (rank + 1) * B]
        k = min(args.micro, len(mine))
        chunks = [mine[i::k] for i in range(k)]

        ph = {"data": 0.0, "forward": 0.0, "backward": 0.0, "optimizer": 0.0, "checkpoint": 0.0}
        t_start = time.perf_counter()
        total = 0.0
        for i, ids in enumerate(chunks):
            t = time.perf_counter()
            batch = ds.__getitems__(ids)
            x = torch.stack([b[1] for b in batch])
            y = torch.stack([b[2] for b in batch])
            t2 = time.perf_counter()
            ph["data"] += t2 - t
            last = i == len(chunks) - 1
            ctx = model.no_sync() if (is_dist and not last) else contextlib.nullcontext()
            with ctx:
                out = model(x)
                loss = nn.functional.mse_loss(out, y) * (len(ids) / len(mine))
                t3 = time.perf_counter()
                ph["forward"] += t3 - t2
                loss.backward()
                ph["backward"] += time.perf_counter() - t3
            total += loss.item()
        t = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        ph["optimizer"] = time.perf_counter() - t
        step += 1

        t = time.perf_counter()
        if step % args.ckpt_every == 0:
            d = os.path.join(args.ckpt_dir, f"step_{step}")
            os.makedirs(d, exist_ok=True)
            if rank == 0:
                torch.save(net.state_dict(), os.path.join(d, "model.pt"))
                torch.save(opt.state_dict(), os.path.join(d, "optim.pt"))
            torch.save({"step": step, "rank": rank}, os.path.join(d, f"position_rank{rank}.pt"))
            if rank == 0:
                open(os.path.join(d, MARKER), "w").close()
            if is_dist:
                dist.barrier()
        ph["checkpoint"] = time.perf_counter() - t
        step_time = time.perf_counter() - t_start

        if rank == 0:
            print(json.dumps({"step": step, "loss": total, "phases": ph, "step_time": step_time}), flush=True)

    if is_dist:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

# RIGHT: a functional model (torch.func.functional_call over a dict of leaf tensors), gradients by torch.autograd.grad, averaged by hand (all_reduce / world), AdamW over the dict's tensors; hand sharding as right_hand_shard.
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

import drill_data


def epoch_order(epoch, n):
    g = torch.Generator()
    g.manual_seed(1234 + epoch)
    return torch.randperm(n, generator=g).tolist()


def latest(ckpt_dir):
    steps = []
    for name in os.listdir(ckpt_dir):
        if name.startswith("step-") and name.endswith(".pt"):
            num = name[len("step-"):-len(".pt")]
            if num.isdigit():
                steps.append(int(num))
    return max(steps) if steps else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", type=str, required=True)
    ap.add_argument("--ckpt-every", type=int, default=5)
    args = ap.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    use_dist = world > 1 or "RANK" in os.environ
    if use_dist:
        dist.init_process_group(backend="gloo")
    rank = dist.get_rank() if use_dist else 0
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(42)
    net = nn.Sequential(nn.Linear(drill_data.FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    params = {k: v.detach().clone().requires_grad_(True) for k, v in net.named_parameters()}
    opt = torch.optim.AdamW(list(params.values()), lr=1e-2, weight_decay=0.0)
    dataset = drill_data.ToyDataset()
    n = len(dataset)
    per_rank = n // world
    steps_per_epoch = per_rank // drill_data.BATCH_SIZE

    global_step = 0
    s = latest(args.ckpt_dir)
    if s is not None:
        blob = torch.load(os.path.join(args.ckpt_dir, f"step-{s}.pt"), map_location="cpu")
        with torch.no_grad():
            for k, v in blob["net"].items():
                params[k].copy_(v)
        opt.load_state_dict(blob["opt"])
        global_step = blob["global_step"]

    while global_step < args.steps:
        epoch = global_step // steps_per_epoch
        mine = epoch_order(epoch, n)[: per_rank * world][rank::world]
        b = global_step % steps_per_epoch
        t_start = time.perf_counter()
        idx = mine[b * drill_data.BATCH_SIZE:(b + 1) * drill_data.BATCH_SIZE]
        samples = [dataset[i] for i in idx]
        x = torch.stack([s_[1] for s_ in samples])
        y = torch.stack([s_[2] for s_ in samples])
        t_data = time.perf_counter()
        pred = functional_call(net, params, (x,))
        loss = F.mse_loss(pred, y)
        t_fwd = time.perf_counter()
        names = list(params)
        grads = torch.autograd.grad(loss, [params[k] for k in names])
        for k, g in zip(names, grads):
            if use_dist:
                dist.all_reduce(g)
                g /= world
            params[k].grad = g
        t_bwd = time.perf_counter()
        opt.step()
        global_step += 1
        t_opt = time.perf_counter()
        if global_step % args.ckpt_every == 0:
            if rank == 0:
                final = os.path.join(args.ckpt_dir, f"step-{global_step}.pt")
                partial = final + ".partial"
                with open(partial, "wb") as fh:
                    torch.save({"net": {k: v.detach() for k, v in params.items()}, "opt": opt.state_dict(),
                                "global_step": global_step}, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.rename(partial, final)
            if use_dist:
                dist.barrier()
        t_end = time.perf_counter()
        if rank == 0:
            rec = {"step": global_step, "loss": float(loss.detach()),
                   "phases": {"data": t_data - t_start, "fwd": t_fwd - t_data,
                              "bwd": t_bwd - t_fwd, "opt": t_opt - t_bwd, "ckpt": t_end - t_opt},
                   "step_time": t_end - t_start}
            print(json.dumps(rec), flush=True)

    if use_dist:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

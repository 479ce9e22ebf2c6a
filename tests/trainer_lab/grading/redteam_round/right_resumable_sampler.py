# RIGHT: a DataLoader over a DistributedSampler subclass that skips the samples already consumed in the epoch (start offset set from the resumed step), DDP; checkpoints "ckpt.<N>.pt" unpadded with rank-0 atomic save, ranks agree on the newest via all_reduce(MIN); old checkpoints pruned (keep 2).
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from drill_data import BATCH_SIZE, FEATURES, ToyDataset


class ResumableSampler(DistributedSampler):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.start = 0

    def __iter__(self):
        idx = list(super().__iter__())
        return iter(idx[self.start:])

    def __len__(self):
        return self.num_samples - self.start

    def state_dict(self):
        return {"epoch": self.epoch, "start": self.start}


def list_ckpts(d):
    out = {}
    for n in os.listdir(d):
        parts = n.split(".")
        if len(parts) == 3 and parts[0] == "ckpt" and parts[1].isdigit() and parts[2] == "pt":
            out[int(parts[1])] = os.path.join(d, n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, default=4)
    args = ap.parse_args()

    dd = "LOCAL_RANK" in os.environ
    if dd:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if dd else 0
    world = dist.get_world_size() if dd else 1
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(31337)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)

    ckpts = list_ckpts(args.ckpt_dir)
    newest = torch.tensor(max(ckpts) if ckpts else -1)
    if dd:
        dist.all_reduce(newest, op=dist.ReduceOp.MIN)  # only a step every rank can see
    step = 0
    if newest.item() >= 0:
        st = torch.load(os.path.join(args.ckpt_dir, f"ckpt.{newest.item()}.pt"))
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        step = st["step"]
    net = DDP(model) if dd else model

    ds = ToyDataset()
    sampler = ResumableSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=4)
    spe = sampler.num_samples // BATCH_SIZE

    while step < args.steps:
        epoch, done = divmod(step, spe)
        sampler.set_epoch(epoch)
        sampler.start = done * BATCH_SIZE
        loader = DataLoader(ds, batch_size=BATCH_SIZE, sampler=sampler, num_workers=0, drop_last=True)
        t0 = time.perf_counter()
        for _, x, y in loader:
            t1 = time.perf_counter()
            loss = nn.functional.mse_loss(net(x), y)
            t2 = time.perf_counter()
            opt.zero_grad()
            loss.backward()
            t3 = time.perf_counter()
            opt.step()
            step += 1
            t4 = time.perf_counter()
            if step % args.ckpt_every == 0:
                if rank == 0:
                    path = os.path.join(args.ckpt_dir, f"ckpt.{step}.pt")
                    with open(path + ".part", "wb") as f:
                        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, f)
                        f.flush()
                        os.fsync(f.fileno())
                    os.replace(path + ".part", path)
                    for old in sorted(list_ckpts(args.ckpt_dir))[:-2]:
                        os.remove(os.path.join(args.ckpt_dir, f"ckpt.{old}.pt"))
                if dd:
                    dist.barrier()
            t5 = time.perf_counter()
            if rank == 0:
                print(json.dumps({"step": step, "loss": loss.item(),
                                  "phases": {"data": t1 - t0, "forward": t2 - t1, "backward": t3 - t2,
                                             "optimizer": t4 - t3, "checkpoint": t5 - t4},
                                  "step_time": t5 - t0}), flush=True)
            if step >= args.steps:
                break
            t0 = time.perf_counter()

    if dd:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

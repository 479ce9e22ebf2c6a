"""A second correct answer in another style: no DDP (gradients all-reduced by hand with
ReduceOp.AVG), SGD with momentum and a StepLR schedule, no dropout, and a checkpoint directory per
save: each part serialized with torch.save into a BytesIO, written and fsynced by hand, the
directory renamed into place when every file is in (the rename is the commit)."""

import argparse
import io
import json
import os
import shutil
import time
from pathlib import Path

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, FEATURES, ToyDataset
from torch import nn


def write_bytes(path: Path, obj: object) -> None:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    with open(path, "wb") as f:
        f.write(buffer.getvalue())
        f.flush()
        os.fsync(f.fileno())


def read(path: Path) -> object:
    return torch.load(io.BytesIO(path.read_bytes()), weights_only=True)


def save(ckpt: Path, step: int, model, opt, sched) -> None:
    tmp = ckpt / f"tmp-{step}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    write_bytes(tmp / "model.bin", model.state_dict())
    write_bytes(tmp / "optim.bin", {"opt": opt.state_dict(), "sched": sched.state_dict()})
    write_bytes(tmp / "meta.bin", {"step": step})
    os.rename(tmp, ckpt / f"ckpt-{step}")


def load(ckpt: Path, model, opt, sched) -> int:
    done = sorted((p for p in ckpt.glob("ckpt-*")), key=lambda p: int(p.name.split("-")[1]))
    if not done:
        return 0
    model.load_state_dict(read(done[-1] / "model.bin"))
    state = read(done[-1] / "optim.bin")
    opt.load_state_dict(state["opt"])
    sched.load_state_dict(state["sched"])
    return int(read(done[-1] / "meta.bin")["step"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--ckpt-dir", type=Path, required=True)
    parser.add_argument("--ckpt-every", type=int, default=10)
    args = parser.parse_args()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    args.ckpt_dir.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.7)
    step = load(args.ckpt_dir, model, opt, sched)
    data = ToyDataset()
    per_rank = len(data) // world
    steps_per_epoch = per_rank // BATCH_SIZE

    while step < args.steps:
        t0 = time.perf_counter()
        epoch, k = divmod(step, steps_per_epoch)
        order = torch.randperm(len(data), generator=torch.Generator().manual_seed(100 + epoch))
        mine = order[rank::world][:per_rank].tolist()[k * BATCH_SIZE : (k + 1) * BATCH_SIZE]
        batch = [data[i] for i in mine]
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        t1 = time.perf_counter()
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        t2 = time.perf_counter()
        if distributed:
            for p in model.parameters():
                dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
        t3 = time.perf_counter()
        opt.step()
        sched.step()
        step += 1
        if step % args.ckpt_every == 0 and rank == 0:
            save(args.ckpt_dir, step, model, opt, sched)
        t4 = time.perf_counter()
        if rank == 0:
            phases = {"data": t1 - t0, "compute": t2 - t1, "allreduce": t3 - t2, "update": t4 - t3}
            print(json.dumps({"step": step, "loss": loss.item(), "phases": phases,
                              "step_time": t4 - t0}), flush=True)  # fmt: skip
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Model answer: distributed training with exact sharded evaluation and a best checkpoint.

Eval: each rank takes the ids rank, rank+W, ... (no padding), sums its losses, correct
predictions and count, and one all_reduce(SUM) makes the global numbers. The best checkpoint
(best.pt, with its step and loss) is written by rank 0 through a rename; a restart reads it back.
"""

import argparse
import json
import os

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, EvalSet, TrainSet
from torch import nn


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    p.add_argument("--eval-every", type=int, default=4)
    p.add_argument("--eval-only", action="store_true")
    return p.parse_args()


def save(obj: dict, path: str) -> None:
    torch.save(obj, path + ".tmp")
    os.replace(path + ".tmp", path)


def evaluate(model: nn.Module, rank: int, world: int) -> tuple[float, float, int]:
    data = EvalSet()
    mine = list(range(rank, len(data), world))
    total = torch.zeros(3, dtype=torch.float64)  # loss sum, correct, count
    model.eval()
    with torch.no_grad():
        for start in range(0, len(mine), 8):
            batch = data.__getitems__(mine[start : start + 8])
            x = torch.stack([b[1] for b in batch])
            y = torch.stack([b[2] for b in batch])
            out = model(x)
            total[0] += nn.functional.cross_entropy(out, y, reduction="sum").double()
            total[1] += (out.argmax(1) == y).sum().double()
            total[2] += len(batch)
    model.train()
    if world > 1:
        dist.all_reduce(total)
    return float(total[0] / total[2]), float(total[1] / total[2]), int(total[2])


def main() -> None:
    args = parse()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, CLASSES))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    best_path = os.path.join(args.ckpt_dir, "best.pt")
    best = torch.load(best_path) if os.path.exists(best_path) else None

    if args.eval_only:
        if best is not None:
            model.load_state_dict(best["model"])
        loss, acc, count = evaluate(model, rank, world)
        step = best["step"] if best else 0
        if rank == 0:
            print(json.dumps({"eval_step": step, "loss": loss, "accuracy": acc, "count": count}))
        if distributed:
            dist.destroy_process_group()
        return

    step = 0
    names = sorted(n for n in os.listdir(args.ckpt_dir) if n.startswith("step-"))
    if names:
        state = torch.load(os.path.join(args.ckpt_dir, names[-1]))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
    train = TrainSet()
    global_batch = BATCH_SIZE * world
    per_epoch = DATASET_SIZE // global_batch
    while step < args.steps:
        epoch, k = divmod(step, per_epoch)
        order = torch.randperm(DATASET_SIZE, generator=torch.Generator().manual_seed(epoch))
        ids = order[k * global_batch : (k + 1) * global_batch][rank::world].tolist()
        batch = train.__getitems__(ids)
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        if world > 1:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item()}), flush=True)
        if step % args.ckpt_every == 0 and rank == 0:
            state = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step}
            save(state, os.path.join(args.ckpt_dir, f"step-{step:06d}.pt"))
        if step % args.eval_every == 0 or step == args.steps:
            eval_loss, acc, count = evaluate(model, rank, world)
            if rank == 0:
                line = {"eval_step": step, "loss": eval_loss, "accuracy": acc, "count": count}
                print(json.dumps(line), flush=True)
            if best is None or eval_loss < best["loss"]:
                best = {"model": model.state_dict(), "step": step, "loss": eval_loss}
                if rank == 0:
                    save(best, best_path)
        if distributed:
            dist.barrier()
    if rank == 0 and best is not None:
        print(json.dumps({"best_step": best["step"], "best_loss": best["loss"]}), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

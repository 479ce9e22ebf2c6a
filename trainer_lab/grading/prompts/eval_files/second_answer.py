"""A second correct answer, another style: DDP, a padded DistributedSampler whose duplicates are
dropped by sample id (every rank's per-sample results are gathered), a DataLoader, and the best
kept as best.json (step, loss) beside best-model.pt, written by rank 0 through renames."""

import argparse
import json
import os

import drill_data
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int)
ap.add_argument("--ckpt-dir")
ap.add_argument("--ckpt-every", type=int)
ap.add_argument("--eval-every", type=int, default=4)
ap.add_argument("--eval-only", action="store_true")
args = ap.parse_args()

launched = "WORLD_SIZE" in os.environ
if launched:
    dist.init_process_group("gloo")
else:  # one process: a world of one, the same code path
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(1)
net = nn.Sequential(
    nn.Linear(drill_data.FEATURES, 32), nn.Tanh(), nn.Linear(32, drill_data.CLASSES)
)
model = DistributedDataParallel(net)
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
os.makedirs(args.ckpt_dir, exist_ok=True)
meta_path = os.path.join(args.ckpt_dir, "best.json")


def atomic_save(obj, path):
    torch.save(obj, path + ".part")
    os.replace(path + ".part", path)


def eval_line(step, loss, acc, n):
    return json.dumps({"eval_step": step, "loss": loss, "accuracy": acc, "count": n})


def run_eval():
    sampler = DistributedSampler(drill_data.EvalSet(), world, rank, shuffle=False)  # pads
    rows = {}
    net.eval()
    with torch.no_grad():
        for ids, x, y in DataLoader(drill_data.EvalSet(), batch_size=5, sampler=sampler):
            out = net(x)
            losses = nn.functional.cross_entropy(out, y, reduction="none")
            right = (out.argmax(1) == y).tolist()
            for i, loss, ok in zip(ids.tolist(), losses.tolist(), right, strict=True):
                rows[i] = (loss, ok)
    net.train()
    gathered = [None] * world
    dist.all_gather_object(gathered, rows)
    merged = {}
    for part in gathered:
        merged.update(part)  # a padded duplicate has the same id: counted once
    n = len(merged)
    loss = sum(v[0] for v in merged.values()) / n
    return loss, sum(v[1] for v in merged.values()) / n, n


best = None
if os.path.exists(meta_path):
    with open(meta_path) as f:
        best = json.load(f)
if args.eval_only:
    if best:
        net.load_state_dict(torch.load(os.path.join(args.ckpt_dir, "best-model.pt")))
    loss, acc, n = run_eval()
    if rank == 0:
        print(eval_line(best["step"] if best else 0, loss, acc, n))
    dist.destroy_process_group()
    raise SystemExit(0)

ckpts = [f for f in os.listdir(args.ckpt_dir) if f.startswith("ckpt_") and f.endswith(".pt")]
step = 0
if ckpts:
    newest = max(ckpts, key=lambda f: int(f[5:-3]))
    state = torch.load(os.path.join(args.ckpt_dir, newest))
    net.load_state_dict(state["net"])
    opt.load_state_dict(state["opt"])
    step = state["step"]

train = drill_data.TrainSet()
sampler = DistributedSampler(train, world, rank, shuffle=True, seed=3, drop_last=True)
per_epoch = len(train) // (drill_data.BATCH_SIZE * world)
while step < args.steps:
    sampler.set_epoch(step // per_epoch)
    skip = step % per_epoch
    loader = DataLoader(train, batch_size=drill_data.BATCH_SIZE, sampler=sampler)
    for k, (_, x, y) in enumerate(loader):
        if k < skip:
            continue
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": round(loss.item(), 5)}), flush=True)
        if step % args.ckpt_every == 0 and rank == 0:
            state = {"net": net.state_dict(), "opt": opt.state_dict(), "step": step}
            atomic_save(state, os.path.join(args.ckpt_dir, f"ckpt_{step}.pt"))
        if step % args.eval_every == 0 or step == args.steps:
            ev_loss, acc, n = run_eval()
            if rank == 0:
                print(eval_line(step, ev_loss, acc, n), flush=True)
            if best is None or ev_loss < best["loss"]:
                best = {"step": step, "loss": ev_loss}
                if rank == 0:
                    atomic_save(net.state_dict(), os.path.join(args.ckpt_dir, "best-model.pt"))
                    with open(meta_path + ".part", "w") as f:
                        json.dump(best, f)
                    os.replace(meta_path + ".part", meta_path)  # the metric after its model
        dist.barrier()
        if step >= args.steps:
            break
if rank == 0:
    print(json.dumps({"best_step": best["step"], "best_loss": best["loss"]}), flush=True)
dist.destroy_process_group()

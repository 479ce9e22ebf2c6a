"""A second correct answer, another style: the SIGTERM handler sets a threading.Event; the stop
flag rides in the gradient all_reduce (one flat buffer: the gradients and the flag), so the ranks
agree inside the step they are in and stop after it. A checkpoint is a directory per step
(model.pt, optim.pt, state.pt) that counts only once its COMPLETE marker is written, last; the
data position is the number of samples consumed."""

import argparse
import os
import signal
import threading

import drill_data
import torch
import torch.distributed as dist
from torch import nn

stop_asked = threading.Event()
signal.signal(signal.SIGTERM, lambda signum, frame: stop_asked.set())

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int)
ap.add_argument("--ckpt-dir")
ap.add_argument("--ckpt-every", type=int)
args = ap.parse_args()

launched = "WORLD_SIZE" in os.environ
if launched:
    dist.init_process_group("gloo")
else:  # one process: a world of one, the same code path
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(3)
net = nn.Sequential(
    nn.Linear(drill_data.FEATURES, 24),
    nn.Tanh(),
    nn.Dropout(0.1),
    nn.Linear(24, drill_data.CLASSES),
)
opt = torch.optim.SGD(net.parameters(), lr=0.2, momentum=0.9)
os.makedirs(args.ckpt_dir, exist_ok=True)
per_step = drill_data.BATCH_SIZE * world
per_epoch = drill_data.DATASET_SIZE // per_step  # steps per epoch (the remainder is dropped)


def complete_checkpoints():
    found = []
    for name in os.listdir(args.ckpt_dir):
        if name.isdigit() and os.path.exists(os.path.join(args.ckpt_dir, name, "COMPLETE")):
            found.append(int(name))
    return sorted(found)


def write_checkpoint(step, consumed):
    where = os.path.join(args.ckpt_dir, f"{step:08d}")
    os.makedirs(where, exist_ok=True)
    torch.save(net.state_dict(), os.path.join(where, "model.pt"))
    torch.save(opt.state_dict(), os.path.join(where, "optim.pt"))
    extra = {"step": step, "consumed": consumed, "rng": torch.random.get_rng_state()}
    torch.save(extra, os.path.join(where, "state.pt"))
    with open(os.path.join(where, "COMPLETE"), "w") as marker:
        marker.write("ok\n")
        marker.flush()
        os.fsync(marker.fileno())


step, consumed = 0, 0  # consumed: global batches taken from drill_data's order
done = complete_checkpoints()
if done:
    where = os.path.join(args.ckpt_dir, f"{done[-1]:08d}")
    net.load_state_dict(torch.load(os.path.join(where, "model.pt")))
    opt.load_state_dict(torch.load(os.path.join(where, "optim.pt")))
    extra = torch.load(os.path.join(where, "state.pt"))
    step, consumed = extra["step"], extra["consumed"]
    torch.random.set_rng_state(extra["rng"])

data = drill_data.TrainSet()
while step < args.steps:
    epoch, k = divmod(consumed, per_epoch)
    first = k * per_step + rank * drill_data.BATCH_SIZE
    ids = drill_data.epoch_order(epoch)[first : first + drill_data.BATCH_SIZE]
    rows = [data[i] for i in ids]
    x = torch.stack([r[1] for r in rows])
    y = torch.stack([r[2] for r in rows])
    opt.zero_grad()
    nn.functional.cross_entropy(net(x), y).backward()
    grads = [p.grad for p in net.parameters()]
    flat = torch.cat([g.reshape(-1) for g in grads] + [torch.ones(1) * stop_asked.is_set()])
    dist.all_reduce(flat)
    at = 0
    for g in grads:
        g.copy_(flat[at : at + g.numel()].view_as(g) / world)
        at += g.numel()
    stop = flat[-1].item() > 0  # any rank asked: every rank sees it, in this step
    opt.step()
    step += 1
    consumed += 1
    if rank == 0 and (step % args.ckpt_every == 0 or stop):
        write_checkpoint(step, consumed)
    if stop:
        break
dist.destroy_process_group()

"""RIGHT (style B): a threading.Event set by the SIGTERM handler; after each step the ranks
all_reduce(SUM) their event flags (any rank preempted -> all stop after this step). Data
parallel by hand: a flattened gradient all_reduce averaged over W (no DDP wrapper), SGD with
momentum. Checkpoint = a directory step-<N>/ where every rank torch.saves its own rank<r>.pt
(replicated model + optimizer + step + its own CPU RNG state) via tmp + fsync + os.replace,
then after a barrier rank 0 writes DONE the same way; only a directory with DONE is loaded."""

import argparse
import os
import signal
import threading

import torch
import torch.distributed as dist
from torch import nn

from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order

preempted = threading.Event()


def fsync_replace(write, path):
    tmp = f"{path}.part"
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, 24)
        self.drop = nn.Dropout(p=0.3)
        self.fc2 = nn.Linear(24, CLASSES)

    def forward(self, x):
        return self.fc2(self.drop(torch.tanh(self.fc1(x))))


def find_resume(d):
    done = [int(n.split("-")[1]) for n in os.listdir(d)
            if n.startswith("step-") and os.path.exists(os.path.join(d, n, "DONE"))]
    return max(done, default=None)


def main():
    signal.signal(signal.SIGTERM, lambda *_: preempted.set())
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    a = ap.parse_args()

    W = int(os.environ.get("WORLD_SIZE", "1"))
    R = int(os.environ.get("RANK", "0"))
    use_dist = "RANK" in os.environ
    if use_dist:
        dist.init_process_group(backend="gloo", rank=R, world_size=W)

    torch.manual_seed(123)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    os.makedirs(a.ckpt_dir, exist_ok=True)
    step = 0
    r = find_resume(a.ckpt_dir)
    if r is not None:
        st = torch.load(os.path.join(a.ckpt_dir, f"step-{r}", f"rank{R}.pt"), weights_only=False)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        torch.set_rng_state(st["rng"])
        step = st["step"]

    data = TrainSet()
    per_step = W * BATCH_SIZE
    spe = DATASET_SIZE // per_step
    params = list(model.parameters())
    while step < a.steps:
        epoch, k = divmod(step, spe)
        chunk = epoch_order(epoch)[k * per_step:(k + 1) * per_step]
        ids = chunk[R * BATCH_SIZE:(R + 1) * BATCH_SIZE]
        samples = [data[i] for i in ids]
        x = torch.stack([s[1] for s in samples])
        y = torch.stack([s[2] for s in samples])
        model.train()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        if use_dist:
            flat = torch.cat([p.grad.reshape(-1) for p in params])
            dist.all_reduce(flat)
            flat /= W
            off = 0
            for p in params:
                n = p.numel()
                p.grad.copy_(flat[off:off + n].view_as(p))
                off += n
        opt.step()
        step += 1
        if R == 0:
            print(f'{{"step": {step}, "loss": {loss.item():.6f}}}', flush=True)
        votes = torch.tensor([1 if preempted.is_set() else 0])
        if use_dist:
            dist.all_reduce(votes)
        stop = votes.item() > 0
        if step % a.ckpt_every == 0 or stop:
            d = os.path.join(a.ckpt_dir, f"step-{step}")
            os.makedirs(d, exist_ok=True)
            st = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                  "rng": torch.get_rng_state()}
            fsync_replace(lambda f: torch.save(st, f), os.path.join(d, f"rank{R}.pt"))
            if use_dist:
                dist.barrier()
            if R == 0:
                fsync_replace(lambda f: f.write(b"done\n"), os.path.join(d, "DONE"))
            if use_dist:
                dist.barrier()
        if stop:
            break
    if use_dist:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

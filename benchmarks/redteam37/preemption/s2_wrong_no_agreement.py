"""WRONG: no agreement: each rank stops on its own SIGTERM flag after its current step, saves
(rank 0) and exits; a rank signalled a step later goes on into a collective alone."""

import argparse
import os
import signal

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order
from torch import nn

STOP = False


def on_term(signum, frame):
    global STOP
    STOP = True


class OrderSampler:
    """This rank's B ids of each global step, in drill_data's order, steps [start, stop)."""

    def __init__(self, world, rank, start, stop):
        self.world, self.rank, self.start, self.stop = world, rank, start, stop
        self.per_epoch = DATASET_SIZE // (world * BATCH_SIZE)

    def __iter__(self):
        for step in range(self.start, self.stop):
            epoch, k = divmod(step, self.per_epoch)
            base = k * self.world * BATCH_SIZE + self.rank * BATCH_SIZE
            yield epoch_order(epoch)[base : base + BATCH_SIZE]

    def __len__(self):
        return self.stop - self.start


def collate(batch):
    return torch.stack([b[1] for b in batch]), torch.stack([b[2] for b in batch])


def worker_init(_):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the main process handles preemption


def newest(d):
    if not os.path.isdir(d):
        return None
    done = sorted(int(f[5:-3]) for f in os.listdir(d) if f.startswith("step-") and f.endswith(".pt"))
    return os.path.join(d, f"step-{done[-1]:06d}.pt") if done else None


def save(d, step, model, opt):
    os.makedirs(d, exist_ok=True)
    final = os.path.join(d, f"step-{step:06d}.pt")
    tmp = final + f".tmp{os.getpid()}"
    state = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
             "rng": torch.get_rng_state()}
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)


def main() -> None:
    signal.signal(signal.SIGTERM, on_term)
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()

    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(FEATURES, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, CLASSES)
    )
    opt = torch.optim.Adam(model.parameters(), lr=0.05)

    step = 0
    path = newest(args.ckpt_dir)
    if path:
        state = torch.load(path, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        torch.set_rng_state(state["rng"])

    loader = torch.utils.data.DataLoader(
        TrainSet(),
        batch_sampler=OrderSampler(world, rank, step, args.steps),
        collate_fn=collate,
        num_workers=0,
        persistent_workers=False,
        generator=torch.Generator().manual_seed(1),
    )
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        if distributed:
            for prm in model.parameters():
                dist.all_reduce(prm.grad)
                prm.grad /= world
        opt.step()
        step += 1
        stopping = STOP
        if (step % args.ckpt_every == 0 or stopping) and rank == 0:
            save(args.ckpt_dir, step, model, opt)
        if stopping:
            break

    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A trainer that must survive preemption: SIGTERM on every rank, a save, a requeue.

Run: python train.py --steps 12 --ckpt-dir ckpt --ckpt-every 4
     torchrun --nproc-per-node 2 train.py --steps 12 --ckpt-dir ckpt --ckpt-every 4
Read the contract (drill mock contract --prompt preemption) before you start.
"""

import argparse

import torch
from drill_data import BATCH_SIZE, CLASSES, DATASET_SIZE, FEATURES, TrainSet, epoch_order
from torch import nn


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(FEATURES, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, CLASSES)
    )
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    train = TrainSet()
    # TODO: process group, sharded data in drill_data's order, checkpoints and resume,
    # SIGTERM: agree, save, exit 0 within the grace period; a second SIGTERM during the save
    for step in range(args.steps):
        epoch, k = divmod(step, DATASET_SIZE // BATCH_SIZE)
        ids = epoch_order(epoch)[k * BATCH_SIZE : (k + 1) * BATCH_SIZE]
        batch = train.__getitems__(ids)
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()

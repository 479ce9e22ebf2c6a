"""Distributed evaluation: train, evaluate exactly at any world size, keep the best checkpoint.

Run: python train.py --steps 16 --ckpt-dir ckpt --ckpt-every 4 --eval-every 4
     torchrun --nproc-per-node 3 train.py --steps 16 --ckpt-dir ckpt --ckpt-every 4 --eval-only
Read the contract (drill mock contract --prompt eval) before you start.
"""

import argparse
import json

import torch
from drill_data import BATCH_SIZE, CLASSES, FEATURES, EvalSet, TrainSet
from torch import nn


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    p.add_argument("--eval-every", type=int, default=4)
    p.add_argument("--eval-only", action="store_true")
    args = p.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, CLASSES))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    train, evaluation = TrainSet(), EvalSet()
    # TODO: process group, sharded training, checkpoints and resume, exact eval, best checkpoint
    for step in range(1, args.steps + 1):
        batch = train.__getitems__(list(range(BATCH_SIZE)))
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(json.dumps({"step": step, "loss": loss.item()}), flush=True)
    del evaluation


if __name__ == "__main__":
    main()

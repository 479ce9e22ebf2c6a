"""FSDP2 first: shard per block, a sharded DCP checkpoint, a resume at another world size.

Run: python train.py --steps 20 --ckpt-dir ckpt --ckpt-every 4
     torchrun --nproc-per-node 2 train.py --steps 20 --ckpt-dir ckpt --ckpt-every 4
     torchrun --nproc-per-node 3 train.py --steps 20 --ckpt-dir ckpt --ckpt-every 4  (resumes)
Read the contract (drill mock contract --prompt fsdp2) before you start.
"""

import argparse
import json

import torch
from drill_data import GLOBAL_BATCH, Model, TrainSet
from torch import nn


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    data = TrainSet()
    # TODO: process group, fully_shard per block then the root, the global batch split over the
    # ranks, sharded DCP checkpoints (atomic), resume at any world size
    for step in range(1, args.steps + 1):
        batch = data.__getitems__(list(range(GLOBAL_BATCH)))
        x = torch.stack([b[1] for b in batch])
        y = torch.stack([b[2] for b in batch])
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(json.dumps({"step": step, "loss": loss.item()}), flush=True)


if __name__ == "__main__":
    main()

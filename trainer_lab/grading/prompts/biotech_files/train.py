"""Model answer: length-bucketed batches with masks, a split by cluster, exact epochs over ranks.

Split: every cluster whose id is a multiple of 5 is held out (validation); the split is the
same in every run and on every rank. Epoch e: the training ids are sorted by (length, a random
key drawn from e), cut into global batches of BATCH_SIZE * W neighbours (buckets of similar
length), the batches shuffled by e; rank r takes batch[r::W]. Step s is batch s % per_epoch of
epoch s // per_epoch: a checkpoint's step is the data position. Padding: PAD_ID up to the
batch's longest sequence; the attention ignores padded keys and the loss counts real residues
only (a sum over residues, divided by the global residue count).
"""

import argparse
import json
import math
import os

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, PAD_ID, VOCAB, ProteinSet
from torch import nn


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, tokens, key_padding_mask=None, attn_mask=None):
        h = self.embed(tokens)
        a, _ = self.attn(
            h, h, h, key_padding_mask=key_padding_mask, attn_mask=attn_mask, need_weights=False
        )
        return self.head(self.norm(h + a))


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    return p.parse_args()


def split(data: ProteinSet) -> tuple[list[int], list[int]]:
    held_out = {c for c in data.clusters if c % 5 == 0}
    train = [i for i, c in enumerate(data.clusters) if c not in held_out]
    val = [i for i, c in enumerate(data.clusters) if c in held_out]
    return train, val


def epoch_batches(train: list[int], lengths: list[int], epoch: int, size: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(epoch)
    keys = torch.rand(len(train), generator=g).tolist()
    order = sorted(range(len(train)), key=lambda k: (lengths[train[k]], keys[k]))
    ids = [train[k] for k in order]
    batches = [ids[k : k + size] for k in range(0, len(ids), size)]
    return [batches[k] for k in torch.randperm(len(batches), generator=g).tolist()]


def collate(items: list) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    longest = max((len(t) for _, t, _, _ in items), default=1)
    tokens = torch.full((len(items), longest), PAD_ID, dtype=torch.long)
    labels = torch.zeros((len(items), longest), dtype=torch.long)
    real = torch.zeros((len(items), longest), dtype=torch.bool)
    for row, (_, t, y, _) in enumerate(items):
        tokens[row, : len(t)] = t
        labels[row, : len(t)] = y
        real[row, : len(t)] = True
    return tokens, labels, real


def residue_loss(model: Tagger, items: list) -> tuple[torch.Tensor, int]:
    """(sum of the cross-entropy over real residues, their count); 0 for no items."""
    if not items:
        return sum(p.sum() * 0 for p in model.parameters()), 0
    tokens, labels, real = collate(items)
    logits = model(tokens, key_padding_mask=~real)
    losses = nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
    return losses[real].sum(), int(real.sum())


def all_sum(value: float, world: int) -> float:
    t = torch.tensor([value], dtype=torch.float64)
    if world > 1:
        dist.all_reduce(t)
    return float(t[0])


def main() -> None:
    args = parse()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    data = ProteinSet()
    train, val = split(data)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    step = 0
    names = sorted(n for n in os.listdir(args.ckpt_dir) if n.startswith("step-"))
    if names:
        state = torch.load(os.path.join(args.ckpt_dir, names[-1]))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
    size = BATCH_SIZE * world
    per_epoch = math.ceil(len(train) / size)
    while step < args.steps:
        epoch, k = divmod(step, per_epoch)
        batch = epoch_batches(train, data.lengths, epoch, size)[k]
        loss_sum, count = residue_loss(model, data.__getitems__(batch[rank::world]))
        total = all_sum(count, world)
        opt.zero_grad()
        (loss_sum / total).backward()
        if world > 1:
            for p in model.parameters():
                dist.all_reduce(p.grad)
        opt.step()
        step += 1
        mean = all_sum(float(loss_sum.detach()), world) / total
        if rank == 0:
            print(json.dumps({"step": step, "loss": mean}), flush=True)
        if step % args.ckpt_every == 0 and rank == 0:
            state = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step}
            torch.save(state, os.path.join(args.ckpt_dir, f"step-{step:06d}.pt.tmp"))
            os.replace(
                os.path.join(args.ckpt_dir, f"step-{step:06d}.pt.tmp"),
                os.path.join(args.ckpt_dir, f"step-{step:06d}.pt"),
            )
        if distributed:
            dist.barrier()
    with torch.no_grad():
        loss_sum, count = residue_loss(model, data.__getitems__(val[rank::world]))
    val_loss = all_sum(float(loss_sum), world) / all_sum(count, world)
    if rank == 0:
        print(json.dumps({"val_loss": val_loss, "val_sequences": len(val)}), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

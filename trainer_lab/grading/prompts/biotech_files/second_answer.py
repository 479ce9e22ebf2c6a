"""A second correct answer in another style: packed rows with a block-diagonal attention mask,
DistributedDataParallel, and the data position (epoch, offset) stored in the checkpoint.

Split: clusters with id % 4 == 1 are held out. Epoch e: a permutation of the training ids drawn
from e; global batch k is its slice k*B*W .. (k+1)*B*W, rank r takes the r-th contiguous part.
Each rank packs its sequences into rows of up to ROW residues (first fit); a residue attends only
to residues of its own sequence, and positions after the last sequence of a row (PAD_ID, label
-100) are ignored by the loss.
"""

import argparse
import json
import os

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, PAD_ID, VOCAB, ProteinSet
from torch import nn
from torch.nn.parallel import DistributedDataParallel

ROW = 64
HEADS = 4
IGNORE = -100


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.attn = nn.MultiheadAttention(32, HEADS, batch_first=True)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, CLASSES)

    def forward(self, tokens, key_padding_mask=None, attn_mask=None):
        h = self.embed(tokens)
        a, _ = self.attn(
            h, h, h, key_padding_mask=key_padding_mask, attn_mask=attn_mask, need_weights=False
        )
        return self.head(self.norm(h + a))


def pack(items: list) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(tokens, labels, attention mask): sequences packed first-fit into rows of ROW."""
    rows: list[list] = []
    for item in sorted(items, key=lambda it: -len(it[1])):
        for row in rows:
            if sum(len(t) for _, t, _, _ in row) + len(item[1]) <= ROW:
                row.append(item)
                break
        else:
            rows.append([item])
    tokens = torch.full((len(rows), ROW), PAD_ID, dtype=torch.long)
    labels = torch.full((len(rows), ROW), IGNORE, dtype=torch.long)
    segment = torch.full((len(rows), ROW), -1, dtype=torch.long)
    for r, row in enumerate(rows):
        at = 0
        for s, (_, t, y, _) in enumerate(row):
            tokens[r, at : at + len(t)] = t
            labels[r, at : at + len(t)] = y
            segment[r, at : at + len(t)] = s
            at += len(t)
    blocked = segment[:, :, None] != segment[:, None, :]
    return tokens, labels, blocked.repeat_interleave(HEADS, dim=0)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.manual_seed(0)
    model = Tagger()
    net = DistributedDataParallel(model) if distributed else model
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    data = ProteinSet()
    train = [i for i, c in enumerate(data.clusters) if c % 4 != 1]
    val = [i for i, c in enumerate(data.clusters) if c % 4 == 1]

    os.makedirs(args.ckpt_dir, exist_ok=True)
    step, epoch, offset = 0, 0, 0
    saved = [n for n in os.listdir(args.ckpt_dir) if n.startswith("ckpt-") and n.endswith(".pt")]
    if saved:
        newest = max(saved, key=lambda n: int(n[len("ckpt-") : -len(".pt")]))
        state = torch.load(os.path.join(args.ckpt_dir, newest))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, epoch, offset = state["step"], state["epoch"], state["offset"]

    size = BATCH_SIZE * world
    while step < args.steps:
        order = torch.randperm(len(train), generator=torch.Generator().manual_seed(100 + epoch))
        chunk = [train[k] for k in order[offset : offset + size].tolist()]
        share = (len(chunk) + world - 1) // world
        mine = data.__getitems__(chunk[rank * share : (rank + 1) * share])
        count = torch.tensor([float(sum(len(t) for _, t, _, _ in mine))])
        if distributed:
            dist.all_reduce(count)
        if mine:
            tokens, labels, blocked = pack(mine)
            logits = net(tokens, attn_mask=blocked)
            loss_sum = nn.functional.cross_entropy(
                logits.transpose(1, 2), labels, ignore_index=IGNORE, reduction="sum"
            )
        else:
            loss_sum = sum(p.sum() * 0 for p in model.parameters())
        opt.zero_grad()
        (loss_sum * world / count[0]).backward()  # DDP averages over the ranks
        opt.step()
        step += 1
        offset += size
        if offset >= len(train):
            epoch, offset = epoch + 1, 0
        total = loss_sum.detach().reshape(1).clone()
        if distributed:
            dist.all_reduce(total)
        if rank == 0:
            print(json.dumps({"step": step, "loss": float(total[0] / count[0])}), flush=True)
        if step % args.ckpt_every == 0 and rank == 0:
            state = {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "step": step,
                "epoch": epoch,
                "offset": offset,
            }
            path = os.path.join(args.ckpt_dir, f"ckpt-{step}.pt")
            torch.save(state, path + ".part")
            os.replace(path + ".part", path)
        if distributed:
            dist.barrier()

    sums = torch.zeros(2, dtype=torch.float64)
    with torch.no_grad():
        mine = data.__getitems__(val[rank::world])
        if mine:
            tokens, labels, blocked = pack(mine)
            logits = model(tokens, attn_mask=blocked)
            sums[0] = nn.functional.cross_entropy(
                logits.transpose(1, 2), labels, ignore_index=IGNORE, reduction="sum"
            ).double()
            sums[1] = float((labels != IGNORE).sum())
    if distributed:
        dist.all_reduce(sums)
    if rank == 0:
        line = {"val_loss": float(sums[0] / sums[1]), "val_sequences": len(val)}
        print(json.dumps(line), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

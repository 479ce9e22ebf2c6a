"""WRONG: packs several sequences into a row and masks padding keys, but has no block-diagonal attn_mask, so residues attend to the other sequences packed into their row."""

import argparse
import json
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from drill_data import BATCH_SIZE, CLASSES, MAX_LENGTH, PAD_ID, VOCAB, ProteinSet

ROW = 64  # packed row capacity (residues)
HEADS = 2


class Tagger(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.positions = nn.Parameter(0.02 * torch.randn(ROW, d))
        self.enc = nn.TransformerEncoderLayer(d, HEADS, 64, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, CLASSES)

    def forward(self, tokens, key_padding_mask=None, attn_mask=None, pos=None):
        if pos is None:
            pos = torch.arange(tokens.shape[1]).expand_as(tokens)
        x = self.embed(tokens) + self.positions[pos]
        return self.out(self.enc(x, src_mask=attn_mask, src_key_padding_mask=key_padding_mask))


def pack(items):
    """First-fit-decreasing into rows of ROW residues. Returns tokens, labels (-100 on padding), positions and a
    (rows*HEADS, L, L) boolean attn_mask (True = may not attend)."""
    items = sorted(items, key=lambda it: -len(it[1]))
    rows = []  # list of lists of items
    for it in items:
        for r in rows:
            if sum(len(x[1]) for x in r) + len(it[1]) <= ROW:
                r.append(it)
                break
        else:
            rows.append([it])
    L = max(sum(len(x[1]) for x in r) for r in rows)
    tokens = torch.full((len(rows), L), PAD_ID, dtype=torch.long)
    labels = torch.full((len(rows), L), -100, dtype=torch.long)
    pos = torch.zeros((len(rows), L), dtype=torch.long)
    seg = torch.full((len(rows), L), -1, dtype=torch.long)
    for ri, r in enumerate(rows):
        o = 0
        for si, (_, t, y, _) in enumerate(r):
            n = len(t)
            tokens[ri, o : o + n] = t
            labels[ri, o : o + n] = y
            pos[ri, o : o + n] = torch.arange(n)
            seg[ri, o : o + n] = si
            o += n
    return tokens, labels, pos, seg < 0


def run_rows(model, items):
    tokens, labels, pos, pad = pack(items)
    logits = model(tokens, key_padding_mask=pad, pos=pos)
    s = F.cross_entropy(logits.reshape(-1, CLASSES), labels.reshape(-1), ignore_index=-100, reduction="sum")
    return s, (labels != -100).sum()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    a = p.parse_args()

    is_dist = "WORLD_SIZE" in os.environ
    if is_dist:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if is_dist else 0
    world = dist.get_world_size() if is_dist else 1
    os.makedirs(a.ckpt_dir, exist_ok=True)

    ds = ProteinSet()
    assert max(ds.lengths) <= MAX_LENGTH <= ROW
    # cluster split: a fixed, seeded choice of about 30% of the clusters
    clusters = sorted(set(ds.clusters))
    held = set(random.Random(17).sample(clusters, k=len(clusters) * 3 // 10))
    train_ids = [i for i in range(len(ds)) if ds.clusters[i] not in held]
    val_ids = [i for i in range(len(ds)) if ds.clusters[i] in held]

    torch.manual_seed(1)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    GB = BATCH_SIZE * world
    steps_per_epoch = -(-len(train_ids) // GB)

    step = 0
    ckpts = [f for f in os.listdir(a.ckpt_dir) if f.endswith(".ckpt")]
    if ckpts:
        newest = max(ckpts, key=lambda f: int(f.split(".")[0]))
        st = torch.load(os.path.join(a.ckpt_dir, newest), weights_only=True)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["optim"])
        step = st["step"]

    def order(epoch):
        ids = list(train_ids)
        random.Random(1000 + epoch).shuffle(ids)
        return ids

    while step < a.steps:
        epoch, k = divmod(step, steps_per_epoch)
        glob = order(epoch)[k * GB : (k + 1) * GB]
        mine = glob[rank * BATCH_SIZE : (rank + 1) * BATCH_SIZE]
        opt.zero_grad(set_to_none=False)
        if mine:
            s, n = run_rows(model, ds.__getitems__(mine))
        else:
            s, n = torch.zeros((), requires_grad=True), torch.tensor(0)
        stats = torch.stack([s.detach(), n.to(s.dtype)])
        if is_dist:
            dist.all_reduce(stats)
        (s / stats[1]).backward()
        if is_dist:
            for prm in model.parameters():
                if prm.grad is None:
                    prm.grad = torch.zeros_like(prm)
            flat = torch.cat([prm.grad.flatten() for prm in model.parameters()])
            dist.all_reduce(flat)  # sum: each rank's loss already divides by the global count
            i = 0
            for prm in model.parameters():
                prm.grad.copy_(flat[i : i + prm.numel()].view_as(prm))
                i += prm.numel()
        opt.step()
        step += 1
        if rank == 0:
            print(json.dumps({"step": step, "loss": round((stats[0] / stats[1]).item(), 6)}), flush=True)
        if step % a.ckpt_every == 0:
            if rank == 0:
                tmp = os.path.join(a.ckpt_dir, f"{step}.ckpt.tmp")
                torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": step}, tmp)
                os.rename(tmp, os.path.join(a.ckpt_dir, f"{step}.ckpt"))
            if is_dist:
                dist.barrier()

    model.eval()
    mine = val_ids[rank::world]
    tot = torch.zeros(3)
    with torch.no_grad():
        for b in range(0, len(mine), BATCH_SIZE):
            chunk = mine[b : b + BATCH_SIZE]
            s, n = run_rows(model, ds.__getitems__(chunk))
            tot += torch.stack([s, n.float(), torch.tensor(float(len(chunk)))])
    if is_dist:
        dist.all_reduce(tot)
    if rank == 0:
        print(json.dumps({"val_loss": round((tot[0] / tot[1]).item(), 6), "val_sequences": int(tot[2])}), flush=True)
    if is_dist:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

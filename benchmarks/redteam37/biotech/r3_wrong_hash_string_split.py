"""WRONG: chooses the held-out clusters with Python's hash() of a string key, which is salted per process (PYTHONHASHSEED), so the split changes between runs and, under plain torchrun, between ranks."""

import argparse
import json
import math
import os
import re

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import drill_data
from drill_data import BATCH_SIZE, CLASSES, PAD_ID, VOCAB, ProteinSet

SEED = 0
IGNORE = -100


class Tagger(nn.Module):
    def __init__(self, d=32, heads=4, max_len=64):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(torch.randn(max_len, d))  # learned positions
        self.block = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, tokens, key_padding_mask=None, attn_mask=None):
        h = self.embed(tokens) + self.pos[: tokens.shape[1]].unsqueeze(0)
        h = self.block(h, src_mask=attn_mask, src_key_padding_mask=key_padding_mask)
        return self.head(h)


def split(ds):
    val_clusters = {c for c in range(drill_data.NUM_CLUSTERS) if hash(f"cluster-{c}") % 4 == 0}
    train = [i for i in range(len(ds)) if ds.clusters[i] not in val_clusters]
    val = [i for i in range(len(ds)) if ds.clusters[i] in val_clusters]
    return train, val


def epoch_batches(train, lengths, epoch, global_batch):
    """Global batches for one epoch: shuffle, sort pools of 4 batches by length, shuffle the full batches; the
    partial batch (if any) goes last."""
    g = torch.Generator().manual_seed(SEED * 1000 + epoch)
    order = [train[i] for i in torch.randperm(len(train), generator=g).tolist()]
    pool = global_batch * 4
    batches = []
    for p in range(0, len(order), pool):
        chunk = sorted(order[p : p + pool], key=lambda i: (lengths[i], i))
        batches += [chunk[k : k + global_batch] for k in range(0, len(chunk), global_batch)]
    full = [b for b in batches if len(b) == global_batch]
    part = [b for b in batches if len(b) < global_batch]
    perm = torch.randperm(len(full), generator=g).tolist()
    leftover = [i for b in part for i in b]
    out = [full[i] for i in perm]
    if leftover:
        leftover = sorted(leftover, key=lambda i: (lengths[i], i))
        out += [leftover[k : k + global_batch] for k in range(0, len(leftover), global_batch)]
    return out


def collate(items):
    L = max(len(t) for _, t, _, _ in items)
    tokens = torch.full((len(items), L), PAD_ID, dtype=torch.long)
    labels = torch.full((len(items), L), IGNORE, dtype=torch.long)
    for r, (_, t, y, _) in enumerate(items):
        tokens[r, : len(t)] = t
        labels[r, : len(y)] = y
    return tokens, labels, labels == IGNORE


def all_sum(t, on):
    if on:
        dist.all_reduce(t)
    return t


def latest(ckpt_dir):
    found = [(int(m.group(1)), n) for n in os.listdir(ckpt_dir) if (m := re.fullmatch(r"ckpt_(\d+)\.pt", n))]
    return max(found)[1] if found else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--ckpt-every", type=int, required=True)
    args = ap.parse_args()

    on = "RANK" in os.environ
    if on:
        dist.init_process_group("gloo")
    rank, world = (dist.get_rank(), dist.get_world_size()) if on else (0, 1)
    os.makedirs(args.ckpt_dir, exist_ok=True)

    torch.manual_seed(SEED)
    model = Tagger()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ds = ProteinSet()
    train, val = split(ds)
    gb = BATCH_SIZE * world
    per_epoch = math.ceil(len(train) / gb)

    step = 0
    name = latest(args.ckpt_dir)
    if name:
        st = torch.load(os.path.join(args.ckpt_dir, name), weights_only=True)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        step = st["step"]
    ddp = nn.parallel.DistributedDataParallel(model) if on else model

    batches, cur_epoch = None, -1
    while step < args.steps:
        epoch, pos = divmod(step, per_epoch)
        if epoch != cur_epoch:
            batches, cur_epoch = epoch_batches(train, ds.lengths, epoch, gb), epoch
        mine = batches[pos][rank::world]
        n_tok = torch.tensor(0.0)
        if mine:
            tokens, labels, pad = collate(ds.__getitems__(mine))
            logits = ddp(tokens, key_padding_mask=pad)
            local = F.cross_entropy(logits.reshape(-1, CLASSES), labels.reshape(-1), ignore_index=IGNORE, reduction="sum")
            n_tok += (~pad).sum()
        else:  # an empty shard in a short last step: join the gradient all-reduce with zero
            logits = ddp(torch.full((1, 1), PAD_ID, dtype=torch.long))
            local = logits.sum() * 0.0
        total = all_sum(n_tok.clone(), on)
        loss = local / total * world  # DDP averages over ranks: the result is sum / global residues
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        printed = all_sum(local.detach().clone(), on) / total
        if rank == 0:
            print(json.dumps({"step": step, "loss": printed.item()}), flush=True)
        if step % args.ckpt_every == 0 and rank == 0:
            path = os.path.join(args.ckpt_dir, f"ckpt_{step}.pt")
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, path + ".tmp")
            os.replace(path + ".tmp", path)
        if on and step % args.ckpt_every == 0:
            dist.barrier()

    # validation, sharded across ranks, bucketed by length
    model.eval()
    shard = sorted(val[rank::world], key=lambda i: (ds.lengths[i], i))
    s, n, k = torch.tensor(0.0), torch.tensor(0.0), torch.tensor(0.0)
    with torch.no_grad():
        for b in range(0, len(shard), BATCH_SIZE):
            ids = shard[b : b + BATCH_SIZE]
            tokens, labels, pad = collate(ds.__getitems__(ids))
            logits = model(tokens, key_padding_mask=pad)
            s += F.cross_entropy(logits.reshape(-1, CLASSES), labels.reshape(-1), ignore_index=IGNORE, reduction="sum")
            n += (~pad).sum()
            k += len(ids)
    stats = all_sum(torch.stack([s, n, k]), on)
    if rank == 0:
        print(json.dumps({"val_loss": (stats[0] / stats[1]).item(), "val_sequences": int(stats[2].item())}), flush=True)
    if on:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""WRONG: a mean of per-rank means (as wrong_rank_mean.py), with the global batch cut so that
rank 0 gets its shorter half and rank 1 its longer half: the per-rank residue counts differ a
lot, so the mean of means is far from the global mean per residue."""

import argparse
import json
import os
import random

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, PAD_ID, VOCAB, ProteinSet
from torch import nn

SEED = 1234


class Tagger(nn.Module):
    """Per-residue classes from the residues around each one (one attention layer)."""

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


def split_by_cluster(data):
    val_clusters = {c for c in set(data.clusters) if c % 5 == 0}
    train = [i for i, c in enumerate(data.clusters) if c not in val_clusters]
    val = [i for i, c in enumerate(data.clusters) if c in val_clusters]
    return train, val


def epoch_batches(train, lengths, epoch, world):
    """Global batches of one epoch: shuffle, sort by length inside pools, shuffle batches."""
    rng = random.Random(SEED * 1000 + epoch)
    order = list(train)
    rng.shuffle(order)
    g = world * BATCH_SIZE
    pool = 4 * g
    batches = []
    for s in range(0, len(order), pool):
        chunk = sorted(order[s : s + pool], key=lambda i: lengths[i])
        batches += [chunk[j : j + g] for j in range(0, len(chunk), g)]
    full = [b for b in batches if len(b) == g]
    short = [b for b in batches if len(b) < g]
    rng.shuffle(full)
    return full + short  # the epoch ends with its (smaller) last step


def collate(items):
    longest = max(len(t) for _, t, _, _ in items)
    tokens = torch.full((len(items), longest), PAD_ID, dtype=torch.long)
    labels = torch.full((len(items), longest), -100, dtype=torch.long)
    pad = torch.ones((len(items), longest), dtype=torch.bool)
    for row, (_, t, y, _) in enumerate(items):
        tokens[row, : len(t)] = t
        labels[row, : len(t)] = y
        pad[row, : len(t)] = False
    return tokens, labels, pad


def all_sum(x, world):
    if world > 1:
        dist.all_reduce(x)
    return x


def latest_ckpt(d):
    if not os.path.isdir(d):
        return None
    steps = [int(f[5:-3]) for f in os.listdir(d) if f.startswith("step-") and f.endswith(".pt")]
    return os.path.join(d, f"step-{max(steps):06d}.pt") if steps else None


def main() -> None:
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

    random.seed(SEED)
    torch.manual_seed(SEED)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    data = ProteinSet()
    train, val = split_by_cluster(data)

    step = 0
    path = latest_ckpt(args.ckpt_dir)
    if path:
        state = torch.load(path, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        torch.set_rng_state(state["rng"])

    per_epoch = len(epoch_batches(train, data.lengths, 0, world))
    while step < args.steps:
        epoch, k = divmod(step, per_epoch)
        batch = epoch_batches(train, data.lengths, epoch, world)[k]
        per = -(-len(batch) // world)
        mine = batch[rank * per : (rank + 1) * per]  # rank 0 the short half, rank 1 the long half
        items = data.__getitems__(mine) if mine else []
        opt.zero_grad()
        count = torch.tensor(float(sum(len(t) for _, t, _, _ in items)))
        if items:
            tokens, labels, pad = collate(items)
            logits = model(tokens, key_padding_mask=pad)
            loss = nn.functional.cross_entropy(
                logits.reshape(-1, CLASSES), labels.reshape(-1), ignore_index=-100, reduction="sum"
            ) / count
            loss.backward()
        else:
            loss = torch.zeros(())
        for prm in model.parameters():
            if prm.grad is None:
                prm.grad = torch.zeros_like(prm)
            all_sum(prm.grad, world)
            prm.grad /= world
        opt.step()
        step += 1
        total = all_sum(loss.detach().clone(), world) / world
        if rank == 0:
            print(json.dumps({"step": step, "loss": total.item()}), flush=True)
        if step % args.ckpt_every == 0 and rank == 0:
            os.makedirs(args.ckpt_dir, exist_ok=True)
            final = os.path.join(args.ckpt_dir, f"step-{step:06d}.pt")
            tmp = final + ".tmp"
            state = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                     "epoch": epoch, "rng": torch.get_rng_state()}
            torch.save(state, tmp)
            os.replace(tmp, final)
        if step % args.ckpt_every == 0 and distributed:
            dist.barrier()

    # validation, sharded across the ranks
    model.eval()
    mine = val[rank::world]
    loss_sum = torch.zeros(())
    count = torch.zeros(())
    with torch.no_grad():
        for s in range(0, len(mine), BATCH_SIZE):
            items = data.__getitems__(mine[s : s + BATCH_SIZE])
            tokens, labels, pad = collate(items)
            logits = model(tokens, key_padding_mask=pad)
            loss_sum += nn.functional.cross_entropy(
                logits.reshape(-1, CLASSES), labels.reshape(-1), ignore_index=-100, reduction="sum"
            )
            count += float((labels != -100).sum())
    nseq = torch.tensor(float(len(mine)))
    for t in (loss_sum, count, nseq):
        all_sum(t, world)
    if rank == 0:
        print(json.dumps({"val_loss": (loss_sum / count).item(), "val_sequences": int(nseq)}),
              flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

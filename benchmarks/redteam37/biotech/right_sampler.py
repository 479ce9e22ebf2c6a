"""Biotech data pipeline, DistributedSampler style: a hand-written cluster-split, length-bucketed
distributed batch sampler with set_epoch (and a resume offset), DDP, one latest.pt saved
atomically with the epoch and the position inside it."""

import argparse
import json
import math
import os

import torch
import torch.distributed as dist
from drill_data import BATCH_SIZE, CLASSES, PAD_ID, VOCAB, ProteinSet
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Sampler

SEED = 7


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


class DistributedBucketSampler(Sampler):
    """Like DistributedSampler, but yields batches: each global batch of W*B similar lengths,
    rank r its r-th slice. set_epoch() reshuffles; start_at() skips the batches already done."""

    def __init__(self, indices, lengths, num_replicas, rank, batch_size, seed=0):
        self.indices, self.lengths = list(indices), lengths
        self.num_replicas, self.rank, self.batch_size, self.seed = num_replicas, rank, batch_size, seed
        self.epoch, self.start = 0, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def start_at(self, k):
        self.start = k

    def global_batches(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        perm = [self.indices[i] for i in torch.randperm(len(self.indices), generator=g).tolist()]
        gb = self.num_replicas * self.batch_size
        # buckets: sort inside windows of 8 global batches, then shuffle the batch order
        out = []
        for s in range(0, len(perm), 8 * gb):
            win = sorted(perm[s : s + 8 * gb], key=lambda i: (self.lengths[i], i))
            out += [win[j : j + gb] for j in range(0, len(win), gb)]
        full = [b for b in out if len(b) == gb]
        last = [b for b in out if len(b) < gb]
        order = torch.randperm(len(full), generator=g).tolist()
        return [full[i] for i in order] + last

    def __iter__(self):
        for b in self.global_batches()[self.start :]:
            yield b[self.rank :: self.num_replicas]

    def __len__(self):
        return math.ceil(len(self.indices) / (self.num_replicas * self.batch_size)) - self.start


def collate(items):
    lengths = torch.tensor([len(t) for _, t, _, _ in items])
    tokens = nn.utils.rnn.pad_sequence([t for _, t, _, _ in items], batch_first=True, padding_value=PAD_ID)
    labels = nn.utils.rnn.pad_sequence([y for _, _, y, _ in items], batch_first=True, padding_value=-100)
    pad = torch.arange(tokens.shape[1])[None, :] >= lengths[:, None]
    return tokens, labels, pad


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()

    ddp = int(os.environ.get("WORLD_SIZE", "1")) > 1 or "LOCAL_RANK" in os.environ
    if ddp:
        dist.init_process_group("gloo")
    rank, world = (dist.get_rank(), dist.get_world_size()) if ddp else (0, 1)

    torch.manual_seed(SEED)
    model = Tagger()
    net = DDP(model) if ddp else model
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    data = ProteinSet()

    # split by cluster, from the index only: clusters sorted, every 4th held out
    clusters = sorted(set(data.clusters))
    held_out = set(clusters[2::4])
    train_ids = [i for i, c in enumerate(data.clusters) if c not in held_out]
    val_ids = [i for i, c in enumerate(data.clusters) if c in held_out]

    sampler = DistributedBucketSampler(train_ids, data.lengths, world, rank, BATCH_SIZE, seed=SEED)
    steps_per_epoch = len(sampler)

    step, epoch, pos = 0, 0, 0
    ckpt = os.path.join(args.ckpt_dir, "latest.pt")
    if os.path.exists(ckpt):
        s = torch.load(ckpt, map_location="cpu")
        model.load_state_dict(s["model"])
        opt.load_state_dict(s["optim"])
        step, epoch, pos = s["step"], s["epoch"], s["pos"]

    while step < args.steps:
        sampler.set_epoch(epoch)
        sampler.start_at(pos)
        loader = DataLoader(data, batch_sampler=sampler, collate_fn=collate)
        for tokens, labels, pad in loader:
            n_local = (labels != -100).sum().float()
            n_global = n_local.clone()
            if ddp:
                dist.all_reduce(n_global)
            logits = net(tokens, key_padding_mask=pad)
            loss_sum = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="sum")
            # DDP averages gradients over the ranks: scale so that the sum is the global mean
            (loss_sum * world / n_global).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            pos += 1
            report = (loss_sum.detach() / n_global).clone()
            if ddp:
                dist.all_reduce(report)
            if pos == steps_per_epoch:
                epoch, pos = epoch + 1, 0
            if rank == 0:
                print(json.dumps({"step": step, "loss": round(report.item(), 6)}), flush=True)
            if step % args.ckpt_every == 0:
                if rank == 0:
                    os.makedirs(args.ckpt_dir, exist_ok=True)
                    torch.save({"model": model.state_dict(), "optim": opt.state_dict(),
                                "step": step, "epoch": epoch, "pos": pos}, ckpt + ".partial")
                    os.replace(ckpt + ".partial", ckpt)
                if ddp:
                    dist.barrier()
            if step >= args.steps:
                break

    net.eval()
    mine = val_ids[rank::world]
    tot = torch.zeros(3)
    with torch.no_grad():
        for s in range(0, len(mine), BATCH_SIZE):
            tokens, labels, pad = collate(data.__getitems__(mine[s : s + BATCH_SIZE]))
            logits = model(tokens, key_padding_mask=pad)
            tot[0] += nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="sum")
            tot[1] += (labels != -100).sum()
    tot[2] = len(mine)
    if ddp:
        dist.all_reduce(tot)
    if rank == 0:
        print(json.dumps({"val_loss": (tot[0] / tot[1]).item(), "val_sequences": int(tot[2])}), flush=True)
    if ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

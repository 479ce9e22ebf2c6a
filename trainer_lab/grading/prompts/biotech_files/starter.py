"""Biotech data pipeline: protein sequences of varying length, split by cluster, exact epochs.

Run: python train.py --steps 16 --ckpt-dir ckpt --ckpt-every 4
     torchrun --nproc-per-node 2 train.py --steps 16 --ckpt-dir ckpt --ckpt-every 4
Read the contract (drill mock contract --prompt biotech) before you start.
"""

import argparse
import json

import torch
from drill_data import BATCH_SIZE, CLASSES, PAD_ID, VOCAB, ProteinSet
from torch import nn


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


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, required=True)
    args = p.parse_args()
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    data = ProteinSet()
    # TODO: process group, a split by cluster, batches with masks, exact epochs across ranks,
    # checkpoints and resume, the validation after step N
    for step in range(1, args.steps + 1):
        items = data.__getitems__(list(range(BATCH_SIZE)))
        longest = max(len(t) for _, t, _, _ in items)
        tokens = torch.full((len(items), longest), PAD_ID)
        labels = torch.zeros((len(items), longest), dtype=torch.long)
        for row, (_, t, y, _) in enumerate(items):
            tokens[row, : len(t)] = t
            labels[row, : len(t)] = y
        loss = nn.functional.cross_entropy(model(tokens).transpose(1, 2), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(json.dumps({"step": step, "loss": loss.item()}), flush=True)


if __name__ == "__main__":
    main()

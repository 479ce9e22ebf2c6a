"""Small models for the labs: an MLP and a tiny GPT-style transformer (imports torch)."""

from __future__ import annotations

import torch
from torch import nn

from trainer_lab.config import TrainConfig


class MLP(nn.Module):
    def __init__(self, d_in: int, hidden: int, depth: int, d_out: int, dropout: float) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = d_in
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.GELU(), nn.Dropout(dropout)]
            width = hidden
        layers.append(nn.Linear(width, d_out))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class Block(nn.Module):
    def __init__(self, d_model: int, n_head: int, dropout: float) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_head, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
        h = self.ln1(x)
        attn, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + self.drop(attn)
        return x + self.drop(self.mlp(self.ln2(x)))


class TinyGPT(nn.Module):
    def __init__(self, cfg: TrainConfig) -> None:
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(
            Block(cfg.d_model, cfg.n_head, cfg.dropout) for _ in range(cfg.n_layer)
        )
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def build_model(cfg: TrainConfig) -> nn.Module:
    if cfg.model == "gpt":
        return TinyGPT(cfg)
    return MLP(cfg.d_in, cfg.hidden, cfg.depth, cfg.d_out, cfg.dropout)


def loss_fn(cfg: TrainConfig, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if cfg.model == "gpt":
        return nn.functional.cross_entropy(output.flatten(0, 1), target.flatten())
    return nn.functional.mse_loss(output, target)


def param_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

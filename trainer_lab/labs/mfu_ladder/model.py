"""The mfu-ladder's GPT (imports torch): one architecture, the attention kernel and activation
checkpointing switchable, so every rung trains the same function with the same weights.

nanoGPT's shape: pre-LN blocks, fused QKV, 4x GELU MLP, untied head, no biases in the
matmuls (so 6N counts matmul weights only; LayerNorm gains are the only non-matmul
parameters outside the embeddings).
- attention="math": softmax(QK^T / sqrt(Q) + causal mask) V written out; its two batched
  matmuls are what torch.utils.flop_counter counts as `bmm` on every device.
- attention="sdpa": F.scaled_dot_product_attention(is_causal=True): the flash kernel on a GPU,
  a fused C++ kernel on CPU (which the FLOP counter does not count there).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

from trainer_lab.config import TrainConfig


class Block(nn.Module):
    def __init__(self, d: int, heads: int, attention: str, causal: bool) -> None:
        super().__init__()
        self.heads, self.attention, self.causal = heads, attention, causal
        self.ln1, self.ln2 = nn.LayerNorm(d, bias=False), nn.LayerNorm(d, bias=False)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.fc = nn.Linear(d, 4 * d, bias=False)
        self.out = nn.Linear(4 * d, d, bias=False)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.attention == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        if self.causal:
            t = q.shape[-2]
            future = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        return scores.softmax(dim=-1) @ v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        x = x + self.proj(self.attend(q, k, v).transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class LadderGPT(nn.Module):
    def __init__(
        self,
        cfg: TrainConfig,
        attention: str = "math",
        checkpointing: bool = False,
        causal: bool = True,
    ) -> None:
        super().__init__()
        self.checkpointing = checkpointing
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(
            Block(cfg.d_model, cfg.n_head, attention, causal) for _ in range(cfg.n_layer)
        )
        self.ln_f = nn.LayerNorm(cfg.d_model, bias=False)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            # non-reentrant checkpointing: the block's forward runs again during backward
            x = checkpoint(block, x, use_reentrant=False) if self.checkpointing else block(x)
        return self.head(self.ln_f(x))

    def matmul_params(self) -> int:
        """N of 6N: the weights that multiply activations (embedding lookups do no FLOPs)."""
        return sum(
            m.weight.numel() for m in self.modules() if isinstance(m, nn.Linear)
        )  # LayerNorm gains scale, they do not multiply matrices

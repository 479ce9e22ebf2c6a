"""stability-logits worker (imports torch): a tiny transformer trained at a high learning rate.

Every arm trains the same decoder-only transformer from the same seed on the same batches,
data-parallel over the W ranks (each rank its slice of the global batch, gradients summed by
one all-reduce and divided by W, so every replica takes the same step). The arms differ in two
switches only:
- QK-norm: queries and keys are RMS-normalised per head (no learned gain) before the dot
  product, so |q.k| / sqrt(d) <= sqrt(d_head) by Cauchy-Schwarz; without it nothing bounds the
  logits, and at a high LR they grow and the attention rows collapse onto one key.
- z-loss: coef * mean(log Z ** 2) added to the loss, log Z = logsumexp of the output logits.
  Cross-entropy does not see a common shift of every logit, so without it log Z is free to
  drift; with it the shift is pulled back to 0.
Every step each rank measures (on its own batch, then max/mean over ranks by all-reduce) the
largest attention logit, the mean attention entropy, and log Z of the output softmax.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F

from trainer_lab.train.collectives import average_gradients
from trainer_lab.train.worker import WorkerContext


class Attention(nn.Module):
    """Causal multi-head self-attention that records its largest logit and its entropy."""

    def __init__(self, d_model: int, n_head: int, qk_norm: bool) -> None:
        super().__init__()
        self.n_head, self.d_head, self.qk_norm = n_head, d_model // n_head, qk_norm
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.max_logit = torch.zeros(())
        self.entropy = torch.zeros(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_head, self.d_head).permute(2, 0, 3, 1, 4)
        if self.qk_norm:
            q, k = F.rms_norm(q, (self.d_head,)), F.rms_norm(k, (self.d_head,))
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        with torch.no_grad():
            self.max_logit = logits.masked_fill(~causal, float("-inf")).amax()
        att = logits.masked_fill(~causal, float("-inf")).softmax(-1)
        with torch.no_grad():
            self.entropy = -(att * att.clamp_min(1e-30).log()).sum(-1).mean()
        out = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, d_model: int, n_head: int, qk_norm: bool) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = Attention(d_model, n_head, qk_norm)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    """Pre-LN decoder; the output head has no bias (a bias would anchor log Z by itself)."""

    def __init__(
        self, vocab: int, seq: int, d_model: int, n_head: int, n_layer: int, qk_norm: bool
    ):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d_model), nn.Embedding(seq, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_head, qk_norm) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

    def attention_stats(self) -> tuple[float, float]:
        """(largest attention logit, smallest per-layer mean entropy) of the last forward."""
        attns = [b.attn for b in self.blocks]
        return max(float(a.max_logit) for a in attns), min(float(a.entropy) for a in attns)


def make_batch(
    gen: torch.Generator, batch: int, seq: int, vocab: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Induction sequences: random tokens, then the same tokens again. The second half is
    predictable only by attending to the right earlier position (the attention must sharpen)."""
    half = torch.randint(0, vocab, (batch, seq // 2 + 1), generator=gen)
    full = torch.cat([half, half], dim=1)[:, : seq + 1]
    return full[:, :-1], full[:, 1:]


def digest(model: nn.Module) -> str:
    """sha256 (16 hex digits) of every parameter's bytes: equal on ranks in sync."""
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def train_arm(
    spec: dict[str, Any], qk_norm: bool, z_coef: float, device: torch.device, rank: int, world: int
) -> tuple[dict[str, list[float]], str]:
    """Train one arm: (per-step series of the global loss, largest attention logit, entropy,
    mean and largest |log Z|; this rank's digest of the final weights)."""
    sync = world > 1 and dist.is_initialized()
    torch.manual_seed(spec["seed"])
    model = TinyTransformer(
        spec["vocab"], spec["seq"], spec["d_model"], spec["n_head"], spec["n_layer"], qk_norm
    ).to(device)
    opt = torch.optim.AdamW(
        model.parameters(), lr=spec["lr"], betas=(0.9, 0.95), weight_decay=0.0, eps=1e-8
    )
    data = torch.Generator().manual_seed(1000 + spec["seed"])
    per_rank = spec["batch_per_rank"]
    series: dict[str, list[float]] = {k: [] for k in ("loss", "max_logit", "entropy", "log_z")}
    series["max_abs_log_z"] = []
    for _ in range(spec["steps"]):
        x, y = make_batch(data, per_rank * world, spec["seq"], spec["vocab"])
        x = x[rank * per_rank : (rank + 1) * per_rank].to(device)
        y = y[rank * per_rank : (rank + 1) * per_rank].to(device)
        logits = model(x)
        ce = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        log_z = torch.logsumexp(logits.float(), dim=-1)
        loss = ce + z_coef * (log_z**2).mean() if z_coef > 0 else ce
        opt.zero_grad(set_to_none=True)
        loss.backward()
        max_logit, entropy = model.attention_stats()
        sums = torch.tensor([ce.item(), log_z.mean().item(), entropy], device=device)
        peaks = torch.tensor([max_logit, log_z.abs().max().item()], device=device)
        if sync:
            if not spec["skip_grad_sync"]:
                average_gradients(model.parameters(), world)
            dist.all_reduce(sums)
            dist.all_reduce(peaks, op=dist.ReduceOp.MAX)
        sums /= world
        opt.step()
        for key, value in zip(("loss", "log_z", "entropy"), sums.tolist(), strict=True):
            series[key].append(value)
        for key, value in zip(("max_logit", "max_abs_log_z"), peaks.tolist(), strict=True):
            series[key].append(value)
    return series, digest(model)


def arms(sabotage: str, z: float) -> dict[str, tuple[bool, float]]:
    """Arm name -> (qk_norm, z-loss coefficient); the sabotages unplug one switch of the
    stabilised arm."""
    return {
        "baseline": (False, 0.0),
        "qk_norm": (True, 0.0),
        "z_loss": (False, z),
        "stabilised": (sabotage != "no_qk_norm", 0.0 if sabotage == "no_z_loss" else z),
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)  # the same reductions on any core count
    result: dict[str, Any] = {}
    digests: dict[str, str] = {}
    for name, (qk_norm, z_coef) in arms(spec["sabotage"], spec["z_loss"]).items():
        series, digests[name] = train_arm(
            {**spec, "skip_grad_sync": spec["sabotage"] == "no_grad_sync"},
            qk_norm,
            z_coef,
            ctx.device,
            ctx.rank,
            ctx.world_size,
        )
        result[name] = {"qk_norm": qk_norm, "z_coef": z_coef, **series}
    ctx.events().write("arm_digests", digests=digests)
    if ctx.rank == 0:
        ctx.events().write("stability", arms=result)

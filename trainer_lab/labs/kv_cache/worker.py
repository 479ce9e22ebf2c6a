"""kv-cache worker (imports torch): the training forward against cached decode, fp32 and bf16.

A tiny causal LM with rotary positions and grouped-query attention (more query heads than
key/value heads) is trained for a few steps with DDP on W ranks (a rule-following synthetic
language, so its predictions are confident, as a policy's are). Then every rank, on its own
batch of prompts:

- rolls out a sequence with the "inference engine" path: prefill the prompt into a KV cache,
  then decode one token per step (sampled, seeded), the logits of every position kept;
- runs the "trainer" path: one full forward over the whole sequence, no cache, and compares
  logits (fp32) and the K/V the cache holds with the keys and values the full forward made;
- measures the bytes the cache tensors hold (their storages), fp32 and bf16;
- counts FLOPs per generated token (torch.utils.flop_counter.FlopCounterMode) with the cache
  and recomputing the whole prefix, split into attention (bmm) and weight matmuls (mm);
- scores the same sequence with a bf16 copy of the model on the cached path (teacher-forced)
  against the fp32 full forward: per-token log-probs, the importance ratio
  exp(lp_train - lp_infer) and KL, as RL post-training sees them.

Sabotages change the engine path only: position_off_by_one, stale_cache (decode steps do not
write the cache), gqa_mis_repeat (key/value heads tiled instead of interleaved),
expand_before_cache (the cache stores every query head), reprefill (every step recomputes the
whole prefix, rewriting the cache). Maxima are all_reduced (MAX), sums (SUM).
"""

from __future__ import annotations

import copy
import math
from contextlib import nullcontext
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from trainer_lab.train.collectives import reduce_numbers
from trainer_lab.train.worker import WorkerContext

VOCAB, D_MODEL, HEADS, KV_HEADS, LAYERS = 64, 64, 4, 2, 2
HEAD_DIM = D_MODEL // HEADS
ATTENTION_OPS = ("bmm",)  # q @ k^T and p @ v; every weight matmul is an mm/addmm


def expand_heads(x: torch.Tensor, heads: int, tiled: bool = False) -> torch.Tensor:
    """[B, KV, S, hd] -> [B, heads, S, hd]: query head h reads key/value head h // group
    (repeat_interleave). tiled (the sabotage) gives head h the kv head h % KV instead."""
    group = heads // x.shape[1]
    return x.repeat(1, group, 1, 1) if tiled else x.repeat_interleave(group, dim=1)


def rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of x [B, heads, T, hd] at positions [T] (angles in fp32)."""
    half = x.shape[-1] // 2
    freqs = 10000.0 ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angle = positions[:, None].float() * freqs
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class KVCache:
    """Preallocated per-layer key/value tensors [B, heads, max_len, hd] (heads = KV_HEADS,
    or HEADS when expanded before caching)."""

    def __init__(self, batch: int, max_len: int, heads: int, dtype: Any, device: Any) -> None:
        shape = (batch, heads, max_len, HEAD_DIM)
        self.k = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(LAYERS)]
        self.v = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(LAYERS)]

    def nbytes(self) -> int:
        """Bytes the cache tensors hold: their storages, measured."""
        return sum(t.untyped_storage().nbytes() for t in (*self.k, *self.v))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
        self.q = nn.Linear(D_MODEL, HEADS * HEAD_DIM, bias=False)
        self.kv = nn.Linear(D_MODEL, 2 * KV_HEADS * HEAD_DIM, bias=False)
        self.o = nn.Linear(HEADS * HEAD_DIM, D_MODEL, bias=False)
        self.mlp = nn.Sequential(
            nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(), nn.Linear(4 * D_MODEL, D_MODEL)
        )

    def attention(
        self, h: torch.Tensor, start: int, layer: int, cache: KVCache | None, run: dict[str, Any]
    ) -> torch.Tensor:
        """Attention of t new tokens at positions start..start+t-1. With a cache, their K/V
        are written to its slots and the queries attend over slots 0..start+t-1; without,
        over the t tokens themselves (start must be 0). `run` carries the engine's state:
        sabotage, decoding (a decode step, not the prefill), record (a list collecting each
        layer's K/V: the trainer path's keys and values)."""
        b, t, _ = h.shape
        sabotage = run.get("sabotage", "none") if cache is not None else "none"
        q = self.q(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k, v = self.kv(h).view(b, t, 2, KV_HEADS, HEAD_DIM).permute(2, 0, 3, 1, 4)
        shift = 1 if sabotage == "position_off_by_one" and run.get("decoding") else 0
        positions = torch.arange(start, start + t, device=h.device) + shift
        q, k = rope(q, positions), rope(k, positions)
        if run.get("record") is not None:
            run["record"].append((k, v))
        if cache is not None:
            if sabotage == "expand_before_cache":
                k, v = expand_heads(k, HEADS), expand_heads(v, HEADS)
            if not (sabotage == "stale_cache" and run.get("decoding")):
                cache.k[layer][:, :, start : start + t] = k
                cache.v[layer][:, :, start : start + t] = v
            k, v = cache.k[layer][:, :, : start + t], cache.v[layer][:, :, : start + t]
        if k.shape[1] != HEADS:
            tiled = sabotage == "gqa_mis_repeat"
            k, v = expand_heads(k, HEADS, tiled), expand_heads(v, HEADS, tiled)
        scores = q @ k.transpose(-1, -2) / math.sqrt(HEAD_DIM)  # [B, H, t, start + t]
        query_pos = torch.arange(start, start + t, device=h.device)[:, None]
        key_pos = torch.arange(start + t, device=h.device)[None, :]
        scores = scores.masked_fill(key_pos > query_pos, float("-inf"))
        out = scores.softmax(-1) @ v
        return self.o(out.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM))

    def forward(
        self, x: torch.Tensor, start: int, layer: int, cache: KVCache | None, run: dict[str, Any]
    ) -> torch.Tensor:
        x = x + self.attention(self.ln1(x), start, layer, cache, run)
        return x + self.mlp(self.ln2(x))


class GQALM(nn.Module):
    """Tiny causal LM: rotary positions, grouped-query attention, an optional KV cache."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(
        self,
        tokens: torch.Tensor,
        start: int = 0,
        cache: KVCache | None = None,
        run: dict[str, Any] | None = None,
    ) -> torch.Tensor:
        """Logits of tokens placed at positions start.. (start > 0 needs the cache of the
        earlier positions)."""
        x = self.tok(tokens)
        for layer, block in enumerate(self.blocks):
            x = block(x, start, layer, cache, run or {})
        return self.head(self.ln_f(x))


def language_batch(gen: torch.Generator, batch: int, length: int) -> torch.Tensor:
    """A rule-following synthetic language: next = (5 * prev + 3) mod V, else (15 %) random."""
    seq = torch.empty(batch, length, dtype=torch.long)
    seq[:, 0] = torch.randint(0, VOCAB, (batch,), generator=gen)
    for i in range(1, length):
        rule = (5 * seq[:, i - 1] + 3) % VOCAB
        noise = torch.rand(batch, generator=gen) < 0.15
        seq[:, i] = torch.where(noise, torch.randint(0, VOCAB, (batch,), generator=gen), rule)
    return seq


def train(ctx: WorkerContext, spec: dict[str, Any]) -> GQALM:
    """A few DDP steps (gradients all_reduced across the ranks), so predictions are peaked."""
    torch.manual_seed(spec["seed"])
    model = GQALM().to(ctx.device)
    wrapped: nn.Module = model
    if dist.is_initialized():
        ids = [ctx.device] if ctx.device.type == "cuda" else None
        wrapped = DDP(model, device_ids=ids)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(spec["seed"] + 1000 * (ctx.rank + 1))
    for _ in range(spec["train_steps"]):
        batch = language_batch(gen, 8, 32).to(ctx.device)
        logits = wrapped(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()


class MatmulBytes(TorchDispatchMode):
    """Bytes of the operands the matmuls read: weights, activations, cached keys/values (the
    tensors each mm/addmm/bmm was given, as the op saw them)."""

    OPS = frozenset(
        {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default}
    )

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func in self.OPS:
            self.bytes += sum(a.numel() * a.element_size() for a in args if torch.is_tensor(a))
        return func(*args, **(kwargs or {}))


class Counted:
    """Count the FLOPs (FlopCounterMode) and matmul operand bytes of what runs inside."""

    def __enter__(self) -> Counted:
        self.flops, self.reads = FlopCounterMode(display=False), MatmulBytes()
        self.flops.__enter__()
        self.reads.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.reads.__exit__(*exc)
        self.flops.__exit__(*exc)

    def split(self, batch: int) -> dict[str, int]:
        """Per sequence: attention FLOPs (bmm), weight-matmul FLOPs, matmul operand bytes."""
        counts = self.flops.get_flop_counts().get("Global", {})
        attention = sum(v for op, v in counts.items() if str(op).split(".")[1] in ATTENTION_OPS)
        total = sum(counts.values())
        return {
            "attention": attention // batch,
            "weights": (total - attention) // batch,
            "bytes": self.reads.bytes,
        }


@torch.no_grad()
def decode(
    model: GQALM,
    prompt: torch.Tensor,
    length: int,
    sabotage: str,
    dtype: Any,
    forced: torch.Tensor | None = None,
    seed: int = 0,
    probes: tuple[int, ...] = (),
) -> tuple[torch.Tensor, torch.Tensor, KVCache, dict[int, dict[str, int]]]:
    """The engine path: prefill, then one token per step (sampled, or forced). Returns
    tokens [B, length], logits [B, length, V] (position i's logits predict token i + 1),
    the cache, and the counted FLOPs of the decode steps whose cache length is in probes."""
    b, p = prompt.shape
    heads = HEADS if sabotage == "expand_before_cache" else KV_HEADS
    cache = KVCache(b, length, heads, dtype, prompt.device)
    run: dict[str, Any] = {"sabotage": sabotage, "decoding": False}
    tokens = torch.zeros(b, length, dtype=torch.long, device=prompt.device)
    tokens[:, :p] = prompt
    logits = torch.zeros(b, length, VOCAB, device=prompt.device)
    logits[:, :p] = model(prompt, 0, cache, run).float()
    gen = torch.Generator().manual_seed(seed)
    flops: dict[int, dict[str, int]] = {}
    for pos in range(p, length):
        if forced is not None:
            tokens[:, pos] = forced[:, pos]
        else:
            probs = logits[:, pos - 1].softmax(-1).cpu()
            tokens[:, pos] = torch.multinomial(probs, 1, generator=gen)[:, 0].to(prompt.device)
        counter = Counted() if pos + 1 in probes else nullcontext()
        with counter:
            if sabotage == "reprefill":  # no use of the cache: the whole prefix again
                step = model(tokens[:, : pos + 1], 0, cache, run)[:, -1:]
            else:
                run["decoding"] = True
                step = model(tokens[:, pos : pos + 1], pos, cache, run)
        logits[:, pos] = step[:, 0].float()
        if isinstance(counter, Counted):
            flops[pos + 1] = counter.split(b)
    return tokens, logits, cache, flops


@torch.no_grad()
def recompute_flops(model: GQALM, tokens: torch.Tensor, n: int) -> dict[str, int]:
    """FLOPs to produce the token after a prefix of n without a cache: a full forward."""
    with Counted() as counter:
        model(tokens[:, :n])
    return counter.split(tokens.shape[0])


def logprob_stats(
    train_logits: torch.Tensor, infer_logits: torch.Tensor, tokens: torch.Tensor, p: int
) -> dict[str, Any]:
    """Per-token log-probs of the generated tokens (positions p..end) under both paths."""
    lt = train_logits[:, p - 1 : -1].double().log_softmax(-1)
    li = infer_logits[:, p - 1 : -1].double().log_softmax(-1)
    target = tokens[:, p:, None]
    lp_t, lp_i = lt.gather(-1, target)[..., 0], li.gather(-1, target)[..., 0]
    diff = lp_t - lp_i
    ratio = diff.exp()
    kl = (lt.exp() * (lt - li)).sum(-1)
    argmax_same = (lt.argmax(-1) == li.argmax(-1)).double()
    return {
        "max": {
            "abs_diff": float(diff.abs().max()),
            "ratio_max": float(ratio.max()),
            "ratio_dev": float((ratio - 1).abs().max()),
        },
        "min": {"ratio_min": float(ratio.min())},
        "sum": {
            "abs_diff": float(diff.abs().sum()),
            "kl": float(kl.sum()),
            "ratio": float(ratio.sum()),
            "ratio_sq": float((ratio**2).sum()),
            "argmax_same": float(argmax_same.sum()),
            "count": float(diff.numel()),
        },
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    sabotage, length, p, b = spec["sabotage"], spec["seq_len"], spec["prompt_len"], spec["batch"]
    model = train(ctx, spec)
    gen = torch.Generator().manual_seed(spec["seed"] + 7 * (ctx.rank + 1))
    prompt = language_batch(gen, b, p).to(ctx.device)
    probes = (length // 4, length // 2, length)
    tokens, engine_logits, cache, flops = decode(
        model, prompt, length, sabotage, torch.float32, seed=spec["seed"] + ctx.rank, probes=probes
    )
    with torch.no_grad():
        record: list[tuple[torch.Tensor, torch.Tensor]] = []
        train_logits = model(tokens, run={"record": record})
    cache_diff = [0.0] * LAYERS
    for layer, (k, v) in enumerate(record):
        if cache.k[layer].shape[1] != k.shape[1]:  # expanded before caching: compare expanded
            k, v = expand_heads(k, HEADS), expand_heads(v, HEADS)
        for held, made in ((cache.k[layer], k), (cache.v[layer], v)):
            cache_diff[layer] = max(cache_diff[layer], float((held - made).abs().max()))
    bf16 = copy.deepcopy(model).to(torch.bfloat16)
    _, bf16_logits, bf16_cache, _ = decode(bf16, prompt, length, sabotage, torch.bfloat16, tokens)
    _, fp32_forced, _, _ = decode(model, prompt, length, sabotage, torch.float32, tokens)
    serve = {
        "bf16": logprob_stats(train_logits, bf16_logits, tokens, p),
        "fp32": logprob_stats(train_logits, fp32_forced, tokens, p),
    }
    maxima = {
        "logit_diff": float((engine_logits - train_logits).abs().max()),
        "cache_diff_first_layer": cache_diff[0],
        "cache_diff": max(cache_diff),
        **{f"{path}.{k}": v for path, s in serve.items() for k, v in s["max"].items()},
    }
    minima = {f"{path}.{k}": v for path, s in serve.items() for k, v in s["min"].items()}
    sums = {f"{path}.{k}": v for path, s in serve.items() for k, v in s["sum"].items()}
    maxima = reduce_numbers(maxima, dist.ReduceOp.MAX, ctx.device)
    minima = reduce_numbers(minima, dist.ReduceOp.MIN, ctx.device)
    sums = reduce_numbers(sums, dist.ReduceOp.SUM, ctx.device)
    if ctx.rank == 0:
        ctx.events().write(
            "kv_cache",
            maxima=maxima,
            minima=minima,
            sums=sums,
            probes=list(probes),
            cached_flops=[flops[n] for n in probes],
            recompute_flops=[recompute_flops(model, tokens, n) for n in probes],
            model_bytes=sum(t.untyped_storage().nbytes() for t in model.parameters()),
            cache_bytes={"fp32": cache.nbytes(), "bf16": bf16_cache.nbytes()},
            cache_shape=list(cache.k[0].shape),
            model={"layers": LAYERS, "heads": HEADS, "kv_heads": KV_HEADS, "head_dim": HEAD_DIM},
        )
        ctx.log("kv-cache done")

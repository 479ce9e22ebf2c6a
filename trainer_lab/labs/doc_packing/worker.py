"""doc-packing worker (imports torch): pack documents into fixed-length rows, compare per document.

Every rank draws the same global set of documents (lengths and tokens from the seed) and packs
its share (documents r, r + W, ...) first-fit into rows of `seq_len` slots; the rest of a row is
padding. One tiny causal transformer (same weights on every rank: seeded, then broadcast from
rank 0) runs

- the packed rows as the pipeline builds them (document mask and positions reset per document,
  unless a sabotage changes that),
- each document alone (positions 0..n-1, causal mask): the reference every document's logits
  and loss are compared with,
- contrasts that never change with the sabotage: a plain causal mask, positions not reset, and
  the same model with rotary positions (where not resetting positions cancels out),
- the cross-document influence: the first document of a row gets other tokens, and the largest
  change of the other documents' logits is measured.

The loss is a masked cross-entropy; its mask is what the pipeline counts (real in-document
targets only, unless sabotaged). Counts and loss sums are all_reduced (SUM), differences
all_reduced (MAX), so every number is the whole job's.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from trainer_lab.train.collectives import reduce_numbers
from trainer_lab.train.worker import WorkerContext

VOCAB, D_MODEL, HEADS, LAYERS = 64, 32, 4, 2
PAD_TOKEN, PAD_DOC = 0, -1


def first_fit(lengths: list[int], seq_len: int) -> list[list[int]]:
    """Pack documents (by index, in order) into rows of seq_len slots: each document goes to
    the first row with room left, else a new row. No document is split (each <= seq_len)."""
    rows: list[list[int]] = []
    room: list[int] = []
    for doc, n in enumerate(lengths):
        if n > seq_len:
            raise ValueError(f"document {doc} has {n} tokens, more than a row's {seq_len}")
        for r, free in enumerate(room):
            if free >= n:
                rows[r].append(doc)
                room[r] -= n
                break
        else:
            rows.append([doc])
            room.append(seq_len - n)
    return rows


def rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding of x [B, H, T, hd] at positions [B, T] (half-split form)."""
    half = x.shape[-1] // 2
    freqs = 10000.0 ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angle = positions[:, None, :, None].float() * freqs
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class Block(nn.Module):
    def __init__(self, rotary: bool) -> None:
        super().__init__()
        self.rotary = rotary
        self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.mlp = nn.Sequential(
            nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(), nn.Linear(4 * D_MODEL, D_MODEL)
        )

    def forward(self, x: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
        if self.rotary:
            q, k = rope(q, positions), rope(k, positions)
        # boolean mask: True = may attend. [B, 1, T, T] broadcasts over the heads.
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None])
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, D_MODEL))
        return x + self.mlp(self.ln2(x))


class PackedLM(nn.Module):
    """A tiny causal LM whose forward takes explicit position ids and an attention mask."""

    def __init__(self, max_positions: int, rotary: bool = False) -> None:
        super().__init__()
        self.rotary = rotary
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(max_positions, D_MODEL)
        self.blocks = nn.ModuleList(Block(rotary) for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(
        self, tokens: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        x = self.tok(tokens)
        if not self.rotary:
            x = x + self.pos(positions)
        for block in self.blocks:
            x = block(x, positions, mask)
        return self.head(self.ln_f(x))


def attention_mask(doc_ids: torch.Tensor, per_document: bool) -> torch.Tensor:
    """[B, T, T] bool: causal, and (per_document) only within the same document id: the
    block-diagonal causal mask FlexAttention's mask_mod or varlen attention would express.
    Padding shares one id, so each padding slot still attends to something (no NaN rows)."""
    t = doc_ids.shape[1]
    causal = torch.ones(t, t, dtype=torch.bool, device=doc_ids.device).tril()
    if not per_document:
        return causal.expand(doc_ids.shape[0], t, t)
    return causal & (doc_ids[:, :, None] == doc_ids[:, None, :])


def target_mask(doc_ids: torch.Tensor, sabotage: str) -> torch.Tensor:
    """[B, T-1] bool: which targets (slot t predicting slot t+1) the loss counts. Right: both
    in the same real document. boundary_targets also keeps a document's last token predicting
    the next document's first; pad_in_loss also keeps every target that touches padding."""
    src, dst = doc_ids[:, :-1], doc_ids[:, 1:]
    same = (src == dst) & (src != PAD_DOC)
    if sabotage == "boundary_targets":
        return same | ((src != PAD_DOC) & (dst != PAD_DOC))
    if sabotage == "pad_in_loss":
        return same | (src == PAD_DOC) | (dst == PAD_DOC)
    return same


def make_documents(spec: dict[str, Any], world: int) -> list[torch.Tensor]:
    """The global document set (same on every rank): docs_per_rank * W documents, lengths
    log-uniform in [min_len, max_len] (many short documents, a few long ones, as in a corpus)."""
    gen = torch.Generator().manual_seed(spec["seed"])
    n_docs = spec["docs_per_rank"] * world
    lo, hi = spec["min_len"], min(spec["max_len"], spec["seq_len"])
    u = torch.rand(n_docs, generator=gen, dtype=torch.float64)
    logs = math.log(lo) + u * (math.log(hi + 1) - math.log(lo))
    lengths = logs.exp().floor().clamp(lo, hi).long().tolist()
    return [torch.randint(1, VOCAB, (n,), generator=gen) for n in lengths]


def build_rows(
    docs: list[torch.Tensor], ids: list[int], seq_len: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[list[tuple[int, int, int]]]]:
    """tokens, doc ids, positions reset per document [R, T], and per row the placed documents
    as (global doc id, start slot, length)."""
    rows = first_fit([len(docs[i]) for i in ids], seq_len)
    tokens = torch.full((len(rows), seq_len), PAD_TOKEN, dtype=torch.long)
    doc_ids = torch.full((len(rows), seq_len), PAD_DOC, dtype=torch.long)
    positions = torch.zeros(len(rows), seq_len, dtype=torch.long)
    placed: list[list[tuple[int, int, int]]] = []
    for r, row in enumerate(rows):
        start, here = 0, []
        for local in row:
            doc = ids[local]
            n = len(docs[doc])
            tokens[r, start : start + n] = docs[doc]
            doc_ids[r, start : start + n] = doc
            positions[r, start : start + n] = torch.arange(n)
            here.append((doc, start, n))
            start += n
        positions[r, start:] = torch.arange(seq_len - start)  # padding: a run of its own
        placed.append(here)
    return tokens, doc_ids, positions, placed


class Packing:
    """One rank's packed rows on a device, and the runs of the model over them."""

    def __init__(self, docs: list[torch.Tensor], ids: list[int], seq_len: int, device: Any):
        self.docs, self.ids, self.seq_len, self.device = docs, ids, seq_len, device
        tokens, doc_ids, positions, self.placed = build_rows(docs, ids, seq_len)
        self.tokens, self.doc_ids = tokens.to(device), doc_ids.to(device)
        self.reset = positions.to(device)
        self.running = torch.arange(seq_len, device=device).expand_as(self.tokens)

    def forward(
        self, model: nn.Module, per_document: bool, reset: bool, tokens: torch.Tensor | None = None
    ) -> torch.Tensor:
        positions = self.reset if reset else self.running
        mask = attention_mask(self.doc_ids, per_document)
        return model(self.tokens if tokens is None else tokens, positions, mask)

    def alone(self, model: nn.Module) -> dict[int, torch.Tensor]:
        """Each document's logits run alone: positions 0..n-1, causal mask."""
        out = {}
        for doc in self.ids:
            x = self.docs[doc].to(self.device)[None]
            pos = torch.arange(len(x[0]), device=self.device)[None]
            out[doc] = model(x, pos, attention_mask(torch.zeros_like(x), False))[0]
        return out

    def compare(self, logits: torch.Tensor, alone: dict[int, torch.Tensor]) -> tuple[float, float]:
        """(max abs logit diff, max abs per-document loss diff) of the packed rows vs alone."""
        logit_diff = loss_diff = 0.0
        for r, row in enumerate(self.placed):
            for doc, start, n in row:
                packed = logits[r, start : start + n]
                ref = alone[doc]
                logit_diff = max(logit_diff, float((packed - ref).abs().max()))
                target = self.docs[doc].to(self.device)[1:]
                lp, la = F.cross_entropy(packed[:-1], target), F.cross_entropy(ref[:-1], target)
                loss_diff = max(loss_diff, float((lp - la).abs()))
        return logit_diff, loss_diff

    def influence(self, model: nn.Module, per_document: bool, reset: bool, seed: int) -> float:
        """Largest change of any other document's logits when each row's first document gets
        other tokens (rows holding one document have nothing to leak into)."""
        gen = torch.Generator().manual_seed(seed)
        changed = self.tokens.clone()
        others = torch.zeros_like(self.tokens, dtype=torch.bool)
        for r, row in enumerate(self.placed):
            if len(row) < 2:
                continue
            _, start, n = row[0]
            shift = torch.randint(1, VOCAB - 1, (n,), generator=gen).to(self.device)
            changed[r, start : start + n] = (changed[r, start : start + n] - 1 + shift) % (
                VOCAB - 1
            ) + 1  # another real token at every slot of the first document
            others[r, start + n :] = self.doc_ids[r, start + n :] != PAD_DOC
        if not bool(others.any()):
            return 0.0
        before = self.forward(model, per_document, reset)
        after = self.forward(model, per_document, reset, tokens=changed)
        return float((after - before).abs()[others].max())


def loss_terms(
    packing: Packing, logits: torch.Tensor, sabotage: str, alone: dict[int, torch.Tensor]
) -> dict[str, float]:
    """This rank's sums: what the pipeline's loss counts, and the references for it."""
    counted = target_mask(packing.doc_ids, sabotage)
    src, dst = packing.doc_ids[:, :-1], packing.doc_ids[:, 1:]
    boundary = counted & (src != dst) & (src != PAD_DOC) & (dst != PAD_DOC)
    padding = counted & ((src == PAD_DOC) | (dst == PAD_DOC))
    ce = F.cross_entropy(
        logits[:, :-1].reshape(-1, VOCAB), packing.tokens[:, 1:].reshape(-1), reduction="none"
    ).view_as(counted)
    alone_sum = 0.0
    for doc, ref in alone.items():
        target = packing.docs[doc].to(packing.device)[1:]
        alone_sum += float(F.cross_entropy(ref[:-1], target, reduction="sum"))
    return {
        "counted_targets": float(counted.sum()),
        "real_targets": float(sum(len(packing.docs[doc]) - 1 for doc in packing.ids)),
        "boundary_targets_counted": float(boundary.sum()),
        "padding_targets_counted": float(padding.sum()),
        "packed_loss_sum": float(ce[counted].double().sum()),
        "alone_loss_sum": alone_sum,
        "real_tokens": float((packing.doc_ids != PAD_DOC).sum()),
        "slots": float(packing.doc_ids.numel()),
        "rows": float(len(packing.placed)),
        "multi_document_rows": float(sum(len(row) >= 2 for row in packing.placed)),
    }


def build_model(seq_len: int, rotary: bool, seed: int, device: Any) -> nn.Module:
    torch.manual_seed(seed)
    model = PackedLM(seq_len, rotary).to(device).eval()
    if dist.is_initialized():
        for p in model.parameters():
            dist.broadcast(p.data, src=0)  # every rank holds rank 0's weights
    return model


@torch.no_grad()
def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    sabotage, seq_len, device = spec["sabotage"], spec["seq_len"], ctx.device
    docs = make_documents(spec, ctx.world_size)
    mine = list(range(ctx.rank, len(docs), ctx.world_size))
    packing = Packing(docs, mine, seq_len, device)
    model = build_model(seq_len, False, spec["seed"] + 1, device)
    per_document, reset = sabotage != "plain_causal", sabotage != "no_position_reset"

    alone = packing.alone(model)
    logits = packing.forward(model, per_document, reset)
    pipeline_diff, pipeline_loss_diff = packing.compare(logits, alone)
    diffs = {
        "pipeline.logit": pipeline_diff,
        "pipeline.doc_loss": pipeline_loss_diff,
        "pipeline.influence": packing.influence(model, per_document, reset, spec["seed"] + 2),
    }
    for name, (doc_mask, pos_reset) in {
        "document_mask": (True, True),
        "causal_mask": (False, True),
        "no_position_reset": (True, False),
    }.items():
        diff, loss_diff = packing.compare(packing.forward(model, doc_mask, pos_reset), alone)
        diffs[f"{name}.logit"], diffs[f"{name}.doc_loss"] = diff, loss_diff
        influence = packing.influence(model, doc_mask, pos_reset, spec["seed"] + 2)
        diffs[f"{name}.influence"] = influence
    rotary = build_model(seq_len, True, spec["seed"] + 1, device)
    rotary_alone = packing.alone(rotary)
    for name, pos_reset in {"rope_reset": True, "rope_no_position_reset": False}.items():
        diff, _ = packing.compare(packing.forward(rotary, True, pos_reset), rotary_alone)
        diffs[f"{name}.logit"] = diff

    sums = reduce_numbers(loss_terms(packing, logits, sabotage, alone), dist.ReduceOp.SUM, device)
    lengths = [len(docs[i]) for i in mine]
    largest = {**diffs, "max_doc_len": float(max(lengths))}
    maxima = reduce_numbers(largest, dist.ReduceOp.MAX, device)
    per_rank = torch.tensor([len(packing.placed), sum(lengths)], device=device)
    gathered = [torch.zeros_like(per_rank) for _ in range(ctx.world_size)]
    if dist.is_initialized():
        dist.all_gather(gathered, per_rank)
    else:
        gathered = [per_rank]
    if ctx.rank == 0:
        ctx.events().write(
            "doc_packing",
            docs=len(docs),
            sums=sums,
            maxima=maxima,
            per_rank_rows=[int(g[0]) for g in gathered],
            per_rank_real_tokens=[int(g[1]) for g in gathered],
            pipeline={
                "mask": "document" if per_document else "causal",
                "positions": "reset" if reset else "running",
            },
        )
        ctx.log("doc-packing done")

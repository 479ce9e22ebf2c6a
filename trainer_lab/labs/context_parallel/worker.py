"""context-parallel worker (imports torch): ring attention over a sequence sharded by chunks.

The sequence (S = 2W chunks of `chunk` tokens) is generated whole on every rank from the seed,
for the one-process reference; each rank then works only on its own chunks' queries, keys and
values. Ring: a rank starts with its own K/V block; at each of W steps it posts the send of
the block it holds to the next rank and the receive of the previous rank's block
(batch_isend_irecv), folds the block it holds into its output while they travel, then waits.
After W steps every rank has seen every block once. The fold is an online softmax: a running
max m, a running sum l and an accumulator, each rescaled by exp(m_old - m_new) when a block
raises the max, so the result equals one softmax over all keys.

Causality by global position: a query chunk skips key chunks wholly after it, masks the upper
triangle of its own chunk, and takes earlier chunks whole; the unmasked pairs are counted.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.train.worker import WorkerContext

DTYPE = torch.float64
# torch 2.13 deprecates all_gather_into_tensor for all_gather_single; 2.11 has only the old one
ALL_GATHER = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def contiguous_chunks(world: int) -> list[list[int]]:
    """Rank r holds chunks 2r and 2r+1: the last rank's queries see the most keys."""
    return [[2 * r, 2 * r + 1] for r in range(world)]


def zigzag_chunks(world: int) -> list[list[int]]:
    """Rank r holds chunk r and chunk 2W-1-r: one early, one late; equal causal work."""
    return [[r, 2 * world - 1 - r] for r in range(world)]


def positions(chunks: list[int], chunk: int) -> list[int]:
    return [c * chunk + i for c in chunks for i in range(chunk)]


class BlockAttention:
    """Causal attention of one rank's query chunks over K/V blocks folded in one at a time."""

    def __init__(self, q: torch.Tensor, q_chunks: list[int], chunk: int, sabotage: str) -> None:
        heads, length, dim = q.shape
        self.q, self.q_chunks, self.chunk, self.sabotage = q * dim**-0.5, q_chunks, chunk, sabotage
        self.m = q.new_full((heads, length), float("-inf"))
        self.l = q.new_zeros((heads, length))
        self.acc = torch.zeros_like(q)
        self.pairs = 0
        self.diagonal = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()

    def add(self, k: torch.Tensor, v: torch.Tensor, k_chunks: list[int]) -> None:
        """Fold one K/V block (the chunks `k_chunks`, in that order) into every query chunk."""
        n = self.chunk
        for qi, qc in enumerate(self.q_chunks):
            rows = slice(qi * n, (qi + 1) * n)
            for ki, kc in enumerate(k_chunks):
                if kc > qc and self.sabotage != "no_cross_block_mask":
                    continue  # every key of this chunk comes after every query: skip it
                cols = slice(ki * n, (ki + 1) * n)
                scores = self.q[:, rows] @ k[:, cols].transpose(-1, -2)
                if kc == qc:
                    scores = scores.masked_fill(~self.diagonal, float("-inf"))
                    self.pairs += int(self.diagonal.sum())
                else:
                    self.pairs += n * n
                self.fold(rows, scores, v[:, cols])

    def fold(self, rows: slice, scores: torch.Tensor, v: torch.Tensor) -> None:
        block_max = scores.amax(-1)
        if self.sabotage == "no_rescale":  # each block on its own max, never reconciled
            p = torch.exp(scores - block_max[..., None])
            self.l[:, rows] += p.sum(-1)
            self.acc[:, rows] += p @ v
            return
        m_new = torch.maximum(self.m[:, rows], block_max)
        correction = torch.exp(self.m[:, rows] - m_new)  # 0 for the first block (m = -inf)
        p = torch.exp(scores - m_new[..., None])
        self.l[:, rows] = self.l[:, rows] * correction + p.sum(-1)
        self.acc[:, rows] = self.acc[:, rows] * correction[..., None] + p @ v
        self.m[:, rows] = m_new

    def result(self) -> torch.Tensor:
        return self.acc / self.l[..., None]


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def ring_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    layout: list[list[int]],
    chunk: int,
    sabotage: str,
) -> tuple[torch.Tensor, dict[str, int]]:
    """This rank's output; pairs computed, K/V bytes received, most K/V bytes held at once."""
    rank, world = dist.get_rank(), dist.get_world_size()
    attention = BlockAttention(q, layout[rank], chunk, sabotage)
    block = torch.stack([k, v])
    received, peak = 0, nbytes(block)
    for step in range(world):
        source = (rank - step) % world  # whose block this rank holds at this step
        pending: list[Any] = []
        if step < world - 1:
            incoming = torch.empty_like(block)
            pending = dist.batch_isend_irecv(
                [
                    dist.P2POp(dist.isend, block, (rank + 1) % world),
                    dist.P2POp(dist.irecv, incoming, (rank - 1) % world),
                ]
            )
            peak = max(peak, nbytes(block) + nbytes(incoming))
        attention.add(block[0], block[1], layout[source])  # computed while the blocks travel
        for work in pending:
            work.wait()
        if pending:
            received += nbytes(incoming)
            block = incoming
    return attention.result(), {"pairs": attention.pairs, "received": received, "peak": peak}


def gathered_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    layout: list[list[int]],
    chunk: int,
    sabotage: str,
) -> tuple[torch.Tensor, dict[str, int]]:
    """The simpler way: all-gather every rank's K/V block, then fold them all in."""
    rank, world = dist.get_rank(), dist.get_world_size()
    attention = BlockAttention(q, layout[rank], chunk, sabotage)
    block = torch.stack([k, v])
    flat = block.new_empty((world * block.shape[0], *block.shape[1:]))  # gloo: concatenated
    ALL_GATHER(flat, block)
    everyone = flat.view(world, *block.shape)
    for source in range(world):
        attention.add(everyone[source, 0], everyone[source, 1], layout[source])
    stats = {
        "pairs": attention.pairs,
        "received": nbytes(everyone) - nbytes(everyone[rank]),  # its own slot is a local copy
        "peak": nbytes(everyone),
    }
    return attention.result(), stats


def full_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """One process, the whole sequence, the causal mask as one matrix."""
    length = q.shape[1]
    scores = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    future = torch.ones(length, length, dtype=torch.bool, device=q.device).triu(1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v


def sequence(
    heads: int, length: int, dim: int, seed: int, device: torch.device
) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(heads, length, dim, generator=gen, dtype=DTYPE).to(device) for _ in "qkv"]


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest |a - b|; 0 when there is nothing to compare (a rank with no early queries)."""
    return float((a - b).abs().max()) if a.numel() else 0.0


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    rank, world, sabotage, n = ctx.rank, ctx.world_size, spec["sabotage"], spec["chunk"]
    heads, dim, seed = spec["heads"], spec["head_dim"], spec["seed"]
    length = 2 * world * n
    q, k, v = sequence(heads, length, dim, seed, ctx.device)
    reference = full_attention(q, k, v)
    layouts = {
        "zigzag": contiguous_chunks(world) if sabotage == "contiguous" else zigzag_chunks(world),
        "contiguous": contiguous_chunks(world),
    }
    report: dict[str, Any] = {}
    for name, layout in layouts.items():
        mine = positions(layout[rank], n)
        out, stats = ring_attention(q[:, mine], k[:, mine], v[:, mine], layout, n, sabotage)
        report[name] = {**stats, "diff": max_diff(out, reference[:, mine])}
        if name == "zigzag":
            # the future half of K/V replaced: outputs before it must not move at all
            cut = length // 2
            k2, v2 = k.clone(), v.clone()
            _, k_new, v_new = sequence(heads, length, dim, seed + 1, ctx.device)
            k2[:, cut:], v2[:, cut:] = k_new[:, cut:], v_new[:, cut:]
            again, _ = ring_attention(q[:, mine], k2[:, mine], v2[:, mine], layout, n, sabotage)
            early = [i for i, p in enumerate(mine) if p < cut]
            report[name]["leak"] = max_diff(again[:, early], out[:, early])
            gathered_out, stats = gathered_attention(
                q[:, mine], k[:, mine], v[:, mine], layout, n, sabotage
            )
            report["all_gather"] = {**stats, "diff": max_diff(gathered_out, reference[:, mine])}
    scaling = []
    for factor in (1, 2, 4):  # the same ring at S, 2S, 4S
        m = n * factor
        qs, ks, vs = sequence(heads, 2 * world * m, dim, seed + factor, ctx.device)
        mine = positions(layouts["zigzag"][rank], m)
        _, stats = ring_attention(
            qs[:, mine], ks[:, mine], vs[:, mine], layouts["zigzag"], m, sabotage
        )
        scaling.append({"seq_len": 2 * world * m, **stats})
    report["scaling"] = scaling
    per_rank: list[Any] = [None] * world
    dist.all_gather_object(per_rank, report)
    if rank == 0:
        ctx.events().write(
            "context_parallel",
            seq_len=length,
            layouts=layouts,
            kv_bytes=nbytes(torch.stack([k, v])),
            ranks=per_rank,
        )

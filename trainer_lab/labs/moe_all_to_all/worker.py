"""moe-all-to-all worker (imports torch): one MoE layer, experts sharded across the ranks.

Every rank builds the same global tokens and weights from the seed, keeps its own tokens and
its own experts, and runs the layer the expert-parallel way:

1. route its tokens: softmax router, top-k, at most `capacity` rows per expert from this rank
   (every token's first choice is placed before any second choice, as in GShard);
2. sort the kept (token, expert) rows by expert, which groups them by the expert's rank;
3. all_to_all_single of per-expert counts, so each rank learns how many rows it will get;
4. all_to_all_single of the rows with those split sizes (dispatch), run the local experts,
   all_to_all_single back with the splits swapped (combine);
5. undo the sort and add each row to its token, weighted by the router probability.

Autograd runs the two payload all-to-alls again in backward (the splits swapped). Each
collective records the rows it sent to and received from every rank, from the split sizes it
was given: bytes are counted, not computed from a formula. The same layer then runs the
all-gather way (every rank gathers every token, partial outputs are reduce-scattered) to
compare the bytes. The reference runs every expert on every token in one process.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from trainer_lab.train.worker import WorkerContext

DIM, HIDDEN = 8, 16
DTYPE = torch.float64
# torch 2.13 deprecates the *_tensor names for *_single; 2.11 has only the old ones
ALL_GATHER = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
REDUCE_SCATTER = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


class Comms:
    """What the layer's collectives moved: one record per call, rows per peer as passed."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def record(
        self, op: str, stage: str, phase: str, sent: list[int], received: list[int], row: int
    ) -> None:
        """`sent[q]` / `received[q]`: rows to / from rank q; `row`: bytes of one row."""
        self.records.append(
            {
                "op": op,
                "stage": stage,
                "phase": phase,
                "sent": sent,
                "received": received,
                "row_bytes": row,
            }
        )


def row_bytes(t: torch.Tensor) -> int:
    return math.prod(t.shape[1:]) * t.element_size()


def exchange(
    x: torch.Tensor,
    out_splits: list[int],
    in_splits: list[int],
    comms: Comms,
    stage: str,
    phase: str = "forward",
) -> torch.Tensor:
    """all_to_all_single with uneven splits: `in_splits[q]` rows of x go to rank q, and
    `out_splits[q]` rows come from rank q, in rank order."""
    out = x.new_empty((sum(out_splits), *x.shape[1:]))
    dist.all_to_all_single(out, x.contiguous(), out_splits, in_splits)
    comms.record("all_to_all", stage, phase, list(in_splits), list(out_splits), row_bytes(x))
    return out


class AllToAll(torch.autograd.Function):
    """The payload all-to-all; its backward is the same exchange with the splits swapped."""

    @staticmethod
    def forward(
        ctx: Any,
        x: torch.Tensor,
        out_splits: list[int],
        in_splits: list[int],
        comms: Comms,
        stage: str,
    ) -> torch.Tensor:
        ctx.splits, ctx.comms, ctx.stage = (out_splits, in_splits), comms, stage
        return exchange(x, out_splits, in_splits, comms, stage)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        out_splits, in_splits = ctx.splits
        back = exchange(grad, in_splits, out_splits, ctx.comms, ctx.stage, "backward")
        return back, None, None, None, None


class AllGather(torch.autograd.Function):
    """Every rank's rows to every rank (backward: reduce-scatter of the gradient)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, comms: Comms, stage: str) -> torch.Tensor:
        ctx.comms, ctx.stage = comms, stage
        return gather(x, comms, stage)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        return scatter_sum(grad, ctx.comms, ctx.stage, "backward"), None, None


class ReduceScatter(torch.autograd.Function):
    """Sum every rank's [W x T] rows and keep this rank's T (backward: all-gather)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, comms: Comms, stage: str) -> torch.Tensor:
        ctx.comms, ctx.stage = comms, stage
        return scatter_sum(x, comms, stage)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        return gather(grad, ctx.comms, ctx.stage, "backward"), None, None


def gather(x: torch.Tensor, comms: Comms, stage: str, phase: str = "forward") -> torch.Tensor:
    world = dist.get_world_size()
    out = x.new_empty((world * x.shape[0], *x.shape[1:]))
    ALL_GATHER(out, x.contiguous())
    rows = [x.shape[0]] * world
    comms.record("all_gather", stage, phase, rows, rows, row_bytes(x))
    return out


def scatter_sum(x: torch.Tensor, comms: Comms, stage: str, phase: str = "forward") -> torch.Tensor:
    world = dist.get_world_size()
    out = x.new_empty((x.shape[0] // world, *x.shape[1:]))
    REDUCE_SCATTER(out, x.contiguous())
    rows = [out.shape[0]] * world
    comms.record("reduce_scatter", stage, phase, rows, rows, row_bytes(x))
    return out


def route(
    x: torch.Tensor, router: torch.Tensor, bias: torch.Tensor, k: int, capacity: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(gate [T,k] router probabilities, idx [T,k] experts, keep [T,k] within capacity).
    Slots go to every token's first choice before any token's second choice, in token order."""
    probs = torch.softmax(x @ router + bias, dim=-1)
    gate, idx = probs.topk(k, dim=-1)
    tokens = idx.shape[0]
    flat = idx.t().reshape(-1)  # choice-major: all first choices, then all second choices
    position = F.one_hot(flat, bias.numel()).cumsum(0).gather(1, flat[:, None]).squeeze(1) - 1
    keep = (position < capacity).view(k, tokens).t()
    return gate, idx, keep


def expert(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w1) @ w2


def run_experts(
    rows: torch.Tensor, which: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor
) -> torch.Tensor:
    """Each row through local expert `which[row]`, grouped by expert, results in row order."""
    out = rows.new_zeros(rows.shape[0], w2.shape[-1])
    for j in range(w1.shape[0]):
        sel = (which == j).nonzero().squeeze(1)
        out = out.index_copy(0, sel, expert(rows[sel], w1[j], w2[j]))
    return out


def layer_all_to_all(
    x: torch.Tensor,
    routed: tuple[torch.Tensor, ...],
    w1: torch.Tensor,
    w2: torch.Tensor,
    comms: Comms,
    sabotage: str,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """The expert-parallel layer; returns (output [T, d], what this rank counted)."""
    gate, idx, keep = routed
    world, per_rank = dist.get_world_size(), w1.shape[0]
    experts = world * per_rank
    tokens = torch.arange(x.shape[0], device=x.device)[:, None].expand_as(idx)
    t_kept, e_kept, g_kept = tokens[keep], idx[keep], gate[keep]
    order = torch.argsort(e_kept, stable=True)  # by expert, hence by the expert's rank
    send = x[t_kept[order]]
    counts = torch.bincount(e_kept, minlength=experts)
    incoming = torch.empty_like(counts)
    dist.all_to_all_single(incoming, counts)  # per-expert counts, per_rank to each rank
    comms.record(
        "count_exchange",
        "counts",
        "forward",
        [per_rank] * world,
        [per_rank] * world,
        counts.element_size(),
    )
    in_splits = counts.view(world, per_rank).sum(1).tolist()
    by_source = incoming.view(world, per_rank)
    out_splits = by_source.sum(1).tolist()
    got = AllToAll.apply(send, out_splits, in_splits, comms, "dispatch")
    local = torch.arange(per_rank, device=x.device).repeat(world)
    which = torch.repeat_interleave(local, incoming)  # rows arrive by source, then expert
    y = run_experts(got, which, w1, w2)
    back = AllToAll.apply(y, in_splits, out_splits, comms, "combine")
    rows = back if sabotage == "wrong_order" else back[torch.argsort(order)]
    weight = torch.ones_like(g_kept) if sabotage == "no_gate" else g_kept
    out = torch.zeros_like(x).index_add(0, t_kept, rows * weight[:, None])
    dropped = 0 if sabotage == "uncounted_drops" else int((~keep).sum())
    return out, {
        "dropped": dropped,
        "processed": int(got.shape[0]),
        "expert_rows": by_source.sum(0).tolist(),
    }


def layer_all_gather(
    x: torch.Tensor,
    router: torch.Tensor,
    bias: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    k: int,
    capacity: int,
    comms: Comms,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """The same layer without all-to-all: gather every token to every rank, route each
    rank's tokens again there, run the local experts on what they got, reduce-scatter."""
    rank, per_rank = dist.get_rank(), w1.shape[0]
    everyone = AllGather.apply(x, comms, "dispatch")
    t = x.shape[0]
    partial = torch.zeros_like(everyone)
    processed, dropped, expert_rows = 0, 0, [0] * per_rank
    for source in range(dist.get_world_size()):
        xs = everyone[source * t : (source + 1) * t]
        gate, idx, keep = route(xs, router, bias, k, capacity)
        if source == rank:
            dropped = int((~keep).sum())
        for j in range(per_rank):
            mine = (idx == rank * per_rank + j) & keep
            sel = mine.any(1).nonzero().squeeze(1)
            weight = (gate * mine).sum(1)[sel]
            rows = expert(xs[sel], w1[j], w2[j]) * weight[:, None]
            partial = partial.index_add(0, sel + source * t, rows)
            processed += int(sel.numel())
            expert_rows[j] += int(sel.numel())
    out = ReduceScatter.apply(partial, comms, "combine")
    return out, {"dropped": dropped, "processed": processed, "expert_rows": expert_rows}


def reference(
    x_all: torch.Tensor,
    router: torch.Tensor,
    bias: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    world: int,
    k: int,
    capacity: int,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """One process: each rank's tokens routed as that rank routes them, every expert run on
    every token, outputs masked by the routing."""
    t = x_all.shape[0] // world
    experts, per_rank = w1.shape[0], w1.shape[0] // world
    outs, routed, processed, dropped = [], [0] * experts, [0] * experts, 0
    remote = [[0] * world for _ in range(world)]  # remote[src][dst]: rows src sends to dst
    for source in range(world):
        xs = x_all[source * t : (source + 1) * t]
        gate, idx, keep = route(xs, router, bias, k, capacity)
        every = torch.stack([expert(xs, w1[e], w2[e]) for e in range(experts)])  # [E, T, d]
        picked = every[idx, torch.arange(t, device=xs.device)[:, None]]  # [T, k, d]
        outs.append((picked * (gate * keep)[..., None]).sum(1))
        dropped += int((~keep).sum())
        for e, n in enumerate(torch.bincount(idx.reshape(-1), minlength=experts).tolist()):
            routed[e] += n
        kept = torch.bincount(idx[keep], minlength=experts).tolist()
        for e, n in enumerate(kept):
            processed[e] += n
            if e // per_rank != source:
                remote[source][e // per_rank] += n
    return torch.cat(outs), {
        "routed": routed,
        "processed": processed,
        "dropped": dropped,
        "remote_rows": remote,
    }


def max_diff(a: torch.Tensor | None, b: torch.Tensor) -> float:
    return float((b if a is None else a - b).abs().max())


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    rank, world, device, sabotage = ctx.rank, ctx.world_size, ctx.device, spec["sabotage"]
    t, per_rank, k = spec["tokens_per_rank"], spec["experts_per_rank"], spec["top_k"]
    experts = per_rank * world
    capacity = math.ceil(spec["capacity_factor"] * t * k / experts)
    gen = torch.Generator().manual_seed(spec["seed"])

    def randn(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return (torch.randn(*shape, generator=gen, dtype=DTYPE) * scale).to(device)

    x_all, target = randn(world * t, DIM), randn(world * t, DIM)
    router = randn(DIM, experts, scale=0.5)
    w1_all, w2_all = randn(experts, DIM, HIDDEN, scale=0.3), randn(experts, HIDDEN, DIM, scale=0.3)
    bias = torch.zeros(experts, dtype=DTYPE, device=device)
    bias[0] = spec["hot_bias"]
    mine = slice(rank * t, (rank + 1) * t)
    span = slice(rank * per_rank, (rank + 1) * per_rank)
    x = x_all[mine].clone().requires_grad_()
    w_router = router.clone().requires_grad_()
    w1, w2 = w1_all[span].clone().requires_grad_(), w2_all[span].clone().requires_grad_()

    comms = Comms()
    if sabotage == "all_gather":
        out, counted = layer_all_gather(x, w_router, bias, w1, w2, k, capacity, comms)
    else:
        routed = route(x, w_router, bias, k, capacity)
        out, counted = layer_all_to_all(x, routed, w1, w2, comms, sabotage)
    (out * target[mine]).sum().backward()
    if sabotage == "reduce_expert_grads":  # as if the experts were replicated (DDP over EP)
        for p in (w1, w2):
            dist.all_reduce(p.grad)
            p.grad /= world
    router_local = w_router.grad.clone() if w_router.grad is not None else None
    router_summed = torch.zeros_like(router) if router_local is None else router_local.clone()
    dist.all_reduce(router_summed)  # the router is a dense, replicated parameter

    ref_x, ref_router = x_all.clone().requires_grad_(), router.clone().requires_grad_()
    ref_w1, ref_w2 = w1_all.clone().requires_grad_(), w2_all.clone().requires_grad_()
    ref_out, ref = reference(ref_x, ref_router, bias, ref_w1, ref_w2, world, k, capacity)
    (ref_out * target).sum().backward()

    with torch.no_grad():
        gathered = Comms()
        alt_out, _ = layer_all_gather(x, w_router, bias, w1, w2, k, capacity, gathered)
    report = {
        "output_diff": max_diff(out, ref_out[mine]),
        "all_gather_diff": max_diff(alt_out, ref_out[mine]),
        "input_grad_diff": max_diff(x.grad, ref_x.grad[mine]),
        "expert_grad_diff": max(
            max_diff(w1.grad, ref_w1.grad[span]), max_diff(w2.grad, ref_w2.grad[span])
        ),
        "router_local_diff": max_diff(router_local, ref_router.grad),
        "router_summed_diff": max_diff(router_summed, ref_router.grad),
        **counted,
        "comms": comms.records,
        "all_gather_comms": gathered.records,
    }
    per_rank_reports: list[Any] = [None] * world
    dist.all_gather_object(per_rank_reports, report)
    if rank == 0:
        ctx.events().write(
            "moe_all_to_all",
            experts=experts,
            capacity=capacity,
            assignments=world * t * k,
            reference=ref,
            ranks=per_rank_reports,
        )

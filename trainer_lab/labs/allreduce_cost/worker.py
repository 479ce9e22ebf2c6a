"""allreduce-cost worker (imports torch): time all-reduce by size; a ring by hand, bytes counted."""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.train.worker import WorkerContext

MIN_EXP = 10  # 1024 floats = 4 KiB
RING_FLOATS = 3 * 4 * 5 * 7 * 8  # divisible by every world size up to 8, and then some


def time_sizes(max_exp: int, reps: int, fixed: bool) -> tuple[list[int], list[float]]:
    """The fastest of `reps` timings per size, slowest rank. Repetitions go round-robin over
    the sizes, so a burst of load from elsewhere slows every size alike instead of one."""
    exps = list(range(MIN_EXP, max_exp + 1))
    bufs = [torch.ones(2 ** (MIN_EXP if fixed else exp)) for exp in exps]
    for buf in bufs:  # warm-up: first use of a size sets up gloo's buffers
        dist.all_reduce(buf)
    best = [float("inf")] * len(exps)
    for _ in range(reps):
        for i, buf in enumerate(bufs):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(buf)
            # the fastest repetition: scheduler noise on a shared CPU only ever adds time
            best[i] = min(best[i], time.perf_counter() - start)
    slowest = torch.tensor(best, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # the collective ends with its last rank
    return [2**exp * 4 for exp in exps], slowest.tolist()


class Counted:
    """send/recv that count what this rank sends."""

    def __init__(self) -> None:
        self.bytes = 0
        self.messages = 0

    def exchange(self, out: torch.Tensor, dst: int, into: torch.Tensor, src: int) -> None:
        self.bytes += out.numel() * out.element_size()
        self.messages += 1
        ops = [dist.P2POp(dist.isend, out.contiguous(), dst), dist.P2POp(dist.irecv, into, src)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()


def ring_all_reduce(
    x: torch.Tensor, rank: int, world: int, io: Counted, off_by_one: bool = False
) -> torch.Tensor:
    chunks = [c.clone() for c in x.chunk(world)]
    right, left = (rank + 1) % world, (rank - 1) % world
    for i in range(world - 1):  # reduce-scatter: after it, chunk (rank + 1) % W is complete here
        send, recv = (rank - i) % world, (rank - i - 1) % world
        incoming = torch.empty_like(chunks[recv])
        io.exchange(chunks[send], right, incoming, left)
        chunks[recv] += incoming
    shift = 0 if not off_by_one else 1  # the bug: pass on a chunk that is not complete yet
    for i in range(world - 1):  # all-gather: pass the complete chunks around
        send, recv = (rank + 1 - i + shift) % world, (rank - i + shift) % world
        incoming = torch.empty_like(chunks[recv])
        io.exchange(chunks[send], right, incoming, left)
        chunks[recv] = incoming
    return torch.cat(chunks)


def naive_all_reduce(x: torch.Tensor, rank: int, world: int, io: Counted) -> torch.Tensor:
    total = x.clone()
    for shift in range(1, world):
        incoming = torch.empty_like(x)
        io.exchange(x, (rank + shift) % world, incoming, (rank - shift) % world)
        total += incoming
    return total


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    sabotage = spec["sabotage"]
    sizes, seconds = time_sizes(spec["max_exp"], spec["reps"], sabotage == "fixed_size")
    gen = torch.Generator().manual_seed(ctx.rank)
    x = torch.randint(-100, 100, (RING_FLOATS,), generator=gen).float()  # exact sums
    io = Counted()
    if sabotage == "naive":
        mine = naive_all_reduce(x, ctx.rank, ctx.world_size, io)
    else:
        mine = ring_all_reduce(x, ctx.rank, ctx.world_size, io, sabotage == "wrong_chunk")
    ref = x.clone()
    dist.all_reduce(ref)
    per_rank: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(per_rank, (io.bytes, io.messages, bool(torch.equal(mine, ref))))
    if ctx.rank == 0:
        ctx.events().write(
            "allreduce_cost",
            sizes_bytes=sizes,
            seconds=seconds,
            ring={
                "tensor_bytes": x.numel() * 4,
                "sent_bytes": [b for b, _, _ in per_rank],
                "messages": [m for _, m, _ in per_rank],
                "matches": all(ok for _, _, ok in per_rank),
            },
        )

"""rank0-logging: every rank calls report for 4 steps with its own loss; stdout is captured per
rank; the lines are compared with the mean over ranks.

Each rank draws its losses afresh in every run (no seed), so the ranks' losses differ by amounts
no answer can know in advance: only a collective reduces them to the mean. The loss passed is
part of a graph, as the caller's is; after each call it must still hold its value (an in-place
all_reduce on it, or on loss.detach(), which shares its storage, changes the caller's loss).

The ranks run on one node, where LOCAL_RANK equals RANK, so a guard on the local rank could not
be told from one on the global rank. For steps 2 and 3 this process's environment is what
`torchrun --nnodes W --nproc-per-node 1` gives (each rank alone on its node: LOCAL_RANK=0,
LOCAL_WORLD_SIZE=1, GROUP_RANK=NODE_RANK=rank), so a `LOCAL_RANK == 0` guard prints on every
rank there; the process group (dist.get_rank()) is unchanged."""

import contextlib
import io
import os
import random
import re
import time
from collections.abc import Iterator

import torch

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError

STEPS = 4
ONE_NODE_STEPS = 2  # steps 0-1 on one node; 2-3 as if each rank were on a node of its own
MULTI_NODE_ENV = ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK", "ROLE_RANK")


@contextlib.contextmanager
def _each_rank_on_its_node(rank: int) -> Iterator[None]:
    """The environment torchrun gives rank `rank` with one process per node."""
    saved = {k: os.environ.get(k) for k in MULTI_NODE_ENV}
    os.environ.update(LOCAL_RANK="0", LOCAL_WORLD_SIZE="1", GROUP_RANK=str(rank),
                      NODE_RANK=str(rank), ROLE_RANK=str(rank))  # fmt: skip
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _loss_with_graph(value: float) -> torch.Tensor:
    """A loss as a training step makes it: a non-leaf that requires grad."""
    return torch.tensor(value, requires_grad=True) * 1.0


LINE = re.compile(r"^step (\d+) loss (-?\d+(?:\.\d+)?)$")


def run(ctx: Ctx) -> None:
    report = ctx.attr("report")
    out = io.StringIO()
    error = ""
    start = time.monotonic()
    draw = random.SystemRandom()  # unseeded: the other ranks' losses cannot be foreseen
    mine = [round(draw.uniform(0.5, 9.5), 4) for _ in range(STEPS)]
    losses = [list(row) for row in zip(*ctx.gather("losses", mine), strict=True)]
    changed: list[str] = []  # steps where report changed the caller's loss
    printed_at: list[int] = []  # the steps after which this rank had printed more
    with contextlib.redirect_stdout(out):
        for step in range(STEPS):
            layout = (
                contextlib.nullcontext()
                if step < ONE_NODE_STEPS
                else _each_rank_on_its_node(ctx.rank)
            )
            before = len(out.getvalue())
            try:
                loss = _loss_with_graph(losses[step][ctx.rank])
                with layout:
                    ctx.call(report, step, loss)
                if abs(loss.item() - losses[step][ctx.rank]) > 1e-6:
                    changed.append(f"step {step}: {losses[step][ctx.rank]:.4f} -> "
                                   f"{loss.item():.4f}")  # fmt: skip
            except UserCodeError as e:
                error = f"step {step}: {e}"
                break
            if len(out.getvalue()) > before:
                printed_at.append(step)
    took = time.monotonic() - start
    ctx.check(
        "no_hang",
        not error,
        f"returned on this rank after {took:.1f} s"
        if not error
        else f"{error} after {took:.1f} s; expected report to return on every rank. Likely "
        "cause: a collective that not every rank calls waits until the timeout",
    )
    ctx.check(
        "loss_unchanged",
        not changed,
        f"report changed the caller's loss tensor: {'; '.join(changed[:2])}; expected it "
        "untouched. Likely cause: the all_reduce ran in place on the caller's tensor (on loss, "
        "or on loss.detach(), which shares its storage): the caller's later uses of loss (its "
        "own logging, early stopping, a backward that saved it) silently see the sum over "
        "ranks. Reduce a copy (loss.detach().clone())"
        if changed
        else "the caller's loss held its value after every call that returned",
    )
    lines = [line.strip() for line in out.getvalue().splitlines() if line.strip()]
    every = ctx.gather("lines", [lines, printed_at])
    if ctx.rank != 0:
        return
    others = {r: got for r, (got, _) in enumerate(every) if r and got}
    first = every[0][0]
    ok = len(first) == STEPS and not others
    detail = f"rank 0 printed {len(first)} line(s), expected {STEPS}"
    if others:
        r, got = next(iter(others.items()))
        if all(step >= ONE_NODE_STEPS for step in every[r][1]):
            cause = (
                f"the print is guarded by the node-local rank (LOCAL_RANK): rank {r} stayed "
                f"silent while the ranks shared a node and printed at steps {every[r][1]}, run "
                "as if each rank had a node of its own (LOCAL_RANK=0 on every node); guard on "
                "the global rank (dist.get_rank() or RANK)"
            )
        else:
            cause = "the print is not under `if rank == 0`"
        detail += (
            f"; rank {r} printed {len(got)} line(s), e.g. {got[0]!r}; expected nothing from "
            f"the other ranks. Likely cause: {cause}"
        )
    elif not ok:
        detail += ". Likely cause: rank 0 does not reach the print on every step"
    ctx.check("rank0_only", ok, detail)
    wrong = []
    for step in range(STEPS):
        mean = sum(losses[step]) / ctx.world_size
        match = next((m for m in map(LINE.match, first) if m and int(m[1]) == step), None)
        if match is None:
            wrong.append(f"no 'step {step} loss L' line on rank 0")
        elif abs(float(match[2]) - mean) > 1e-3:
            wrong.append(f"step {step}: printed {match[2]}, expected the mean over ranks "
                         f"{mean:.4f}")  # fmt: skip
    detail = "; ".join(wrong) or "the mean over ranks each step"
    if wrong:
        printed = [float(m[2]) for m in map(LINE.match, first) if m and int(m[1]) < STEPS]
        own = [losses[int(m[1])][0] for m in map(LINE.match, first) if m and int(m[1]) < STEPS]
        sums = [sum(losses[int(m[1])]) for m in map(LINE.match, first) if m and int(m[1]) < STEPS]
        if printed and all(abs(a - b) < 1e-3 for a, b in zip(printed, own, strict=True)):
            cause = "rank 0 prints its own loss, not the mean over ranks"
        elif printed and all(abs(a - b) < 1e-3 for a, b in zip(printed, sums, strict=True)):
            cause = "the all-reduced sum is printed without dividing by the number of ranks"
        elif (
            len(printed) > 1
            and max(a - b for a, b in zip(printed, own, strict=True))
            - min(a - b for a, b in zip(printed, own, strict=True))
            < 2e-3
        ):
            cause = (
                "the printed value is rank 0's own loss plus a constant, whatever the other "
                "ranks' losses are: their losses never reach rank 0 (no collective combines "
                "them)"
            )
        elif not printed:
            cause = "rank 0 prints no 'step S loss L' line (see rank0_only)"
        else:
            cause = "the printed value is not the mean of the ranks' losses"
        detail += f". Likely cause: {cause}"
    ctx.check("mean_over_ranks", not wrong, detail)

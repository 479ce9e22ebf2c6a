"""rank0-logging: every rank calls report for 3 steps with its own loss; stdout is captured per
rank; the lines are compared with the mean over ranks."""

import contextlib
import io
import re
import time

import torch

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError

STEPS = 3
LINE = re.compile(r"^step (\d+) loss (-?\d+(?:\.\d+)?)$")


def run(ctx: Ctx) -> None:
    report = ctx.attr("report")
    out = io.StringIO()
    error = ""
    start = time.monotonic()
    losses = [[1.0 + step + 2.0 * rank for rank in range(ctx.world_size)] for step in range(STEPS)]
    with contextlib.redirect_stdout(out):
        for step in range(STEPS):
            try:
                ctx.call(report, step, torch.tensor(losses[step][ctx.rank]))
            except UserCodeError as e:
                error = f"step {step}: {e}"
                break
    took = time.monotonic() - start
    ctx.check(
        "no_hang",
        not error,
        f"returned on this rank after {took:.1f} s"
        if not error
        else f"{error} after {took:.1f} s; expected report to return on every rank. Likely "
        "cause: a collective that not every rank calls waits until the timeout",
    )
    lines = [line.strip() for line in out.getvalue().splitlines() if line.strip()]
    every = ctx.gather("lines", lines)
    if ctx.rank != 0:
        return
    others = {r: got for r, got in enumerate(every) if r and got}
    first = every[0]
    ok = len(first) == STEPS and not others
    detail = f"rank 0 printed {len(first)} line(s), expected {STEPS}"
    if others:
        r, got = next(iter(others.items()))
        detail += (
            f"; rank {r} printed {len(got)} line(s), e.g. {got[0]!r}; expected nothing from "
            "the other ranks. Likely cause: the print is not under `if rank == 0`"
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
        elif not printed:
            cause = "rank 0 prints no 'step S loss L' line (see rank0_only)"
        else:
            cause = "the printed value is not the mean of the ranks' losses"
        detail += f". Likely cause: {cause}"
    ctx.check("mean_over_ranks", not wrong, detail)

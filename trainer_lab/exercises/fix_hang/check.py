"""fix-hang: call should_stop on every rank for cases where the ranks' losses fall on both sides
of the threshold; a collective only some ranks reach times out in 4 s and raises."""

import time

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError

THRESHOLD = 1.2
# Losses per rank (rank r uses index r % 2). After the third case rank 1 never reaches a
# collective again, so a collective only rank 0 joins cannot pair with a later one: it times out.
CASES = [[0.5, 0.7], [1.5, 2.5], [0.5, 1.5], [2.0, 1.9]]


def run(ctx: Ctx) -> None:
    fn = ctx.attr("should_stop")
    answers: list[bool] = []
    error = ""
    start = time.monotonic()
    for case in CASES:
        try:
            answers.append(bool(ctx.call(fn, case[ctx.rank % 2], THRESHOLD)))
        except UserCodeError as e:
            error = f"case {case}: {e}"
            break
    took = time.monotonic() - start
    ctx.check("no_hang", not error,
              f"all {len(CASES)} cases returned in {took:.1f} s" if not error else
              f"{error} after {took:.1f} s: a rank whose loss is not below the threshold never "
              "joins the collective")  # fmt: skip
    every = ctx.gather("answers", answers)
    if ctx.rank != 0:
        return
    n = min(len(a) for a in every)
    split = [CASES[i] for i in range(n) if len({a[i] for a in every}) > 1]
    detail = f"same decision on every rank in {n}/{len(CASES)} cases"
    if split:
        answers = [a[CASES.index(split[0])] for a in every]
        detail = f"ranks disagree for losses {split[0]} (per rank): {answers}"
    ctx.check("ranks_agree", not split and n == len(CASES), detail)
    mean = [sum(c[r % 2] for r in range(ctx.world_size)) / ctx.world_size for c in CASES]
    wrong = [
        f"rank {r}, losses {CASES[i]}: returned {a[i]}, but mean {mean[i]:.2f} < {THRESHOLD} is "
        f"{mean[i] < THRESHOLD}"
        for r, a in enumerate(every) for i in range(n) if a[i] != (mean[i] < THRESHOLD)
    ]  # fmt: skip
    ok = not wrong and n == len(CASES)
    ctx.check(
        "uses_the_mean", ok, "; ".join(wrong[:2]) or f"{n}/{len(CASES)} cases decided by the mean"
    )

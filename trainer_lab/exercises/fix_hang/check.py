"""fix-hang: call should_stop on every rank for cases where the ranks' losses fall on both sides
of the threshold; a collective only some ranks reach times out in 4 s and raises.

The cases separate the mean from the rules a wrong answer usually follows instead: every rank
below (a unanimous vote, the max), any rank below (the min), rank 0's (or rank 1's) own loss,
the sum. When the answers disagree with the mean, the message names the rule they follow."""

import time

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError

THRESHOLD = 1.2
# Losses per rank (rank r uses index r % 2). More cases have only rank 0 below the threshold
# (3) than only rank 1 (2), so in a branch-guarded collective at least one call of rank 0 is
# never paired by rank 1, whatever the order: it times out.
CASES = [
    [0.5, 0.7],  # mean below; the sum is not
    [1.5, 2.5],  # both above
    [0.5, 1.5],  # mean below, rank 1 above: not "every rank below", not "rank 1's"
    [1.5, 0.5],  # mean below, rank 0 above: not "every rank below", not "rank 0's"
    [1.0, 2.0],  # mean above, rank 0 below: not "any rank below", not "rank 0's"
    [2.0, 0.8],  # mean above, rank 1 below: not "any rank below", not "rank 1's"
    [1.1, 1.9],  # mean above, rank 0 below
]

# rule name -> decision from the ranks' losses (the mistakes the message can name)
RULES = {
    "every rank's loss below the threshold (a unanimous vote, or the max)": lambda c: (
        max(c) < THRESHOLD
    ),
    "any rank's loss below the threshold (the min)": lambda c: min(c) < THRESHOLD,
    "rank 0's own loss (rank 0 decides alone)": lambda c: c[0] < THRESHOLD,
    "rank 1's own loss": lambda c: c[1] < THRESHOLD,
    "the sum of the losses, not divided by the number of ranks": lambda c: sum(c) < THRESHOLD,
}


def _follows(answers: list[bool], cases: list[list[float]]) -> str:
    for rule, decide in RULES.items():
        if all(a == decide(c) for a, c in zip(answers, cases, strict=True)):
            return rule
    return ""


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
              f"{error} after {took:.1f} s; expected every rank to return. Likely cause: a rank "
              "whose loss is not below the threshold never joins the collective the others "
              "wait in")  # fmt: skip
    every = ctx.gather("answers", answers)
    if ctx.rank != 0:
        return
    n = min(len(a) for a in every)
    split = [CASES[i] for i in range(n) if len({a[i] for a in every}) > 1]
    detail = f"same decision on every rank in {n}/{len(CASES)} cases"
    if split:
        answers = [a[CASES.index(split[0])] for a in every]
        detail = (
            f"ranks disagree for losses {split[0]} (per rank): {answers}; expected one decision "
            "on every rank. Likely cause: a rank decides from its own loss, or from a "
            "collective the other rank did not join at the same point"
        )
    ctx.check("ranks_agree", not split and n == len(CASES), detail)
    mean = [sum(c[r % 2] for r in range(ctx.world_size)) / ctx.world_size for c in CASES]
    wrong = [
        f"rank {r}, losses {CASES[i]}: returned {a[i]}, but mean {mean[i]:.2f} < {THRESHOLD} is "
        f"{mean[i] < THRESHOLD}"
        for r, a in enumerate(every) for i in range(n) if a[i] != (mean[i] < THRESHOLD)
    ]  # fmt: skip
    ok = not wrong and n == len(CASES)
    detail = f"{n}/{len(CASES)} cases decided by the mean"
    if wrong:
        rule = "" if split else _follows(every[0][:n], CASES[:n])
        cause = (
            f"the decisions follow {rule}, not the mean"
            if rule
            else "the decision is not the mean of every rank's loss compared with the threshold"
        )
        detail = f"{'; '.join(wrong[:2])}. Likely cause: {cause}"
    elif n < len(CASES):
        detail = f"only {n}/{len(CASES)} cases returned on every rank (see no_hang)"
    ctx.check("uses_the_mean", ok, detail)

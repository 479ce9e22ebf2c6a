"""fix-hang: call should_stop on every rank for cases where the ranks' losses fall on both sides
of the threshold; a collective only some ranks reach times out in 4 s and raises.

The cases separate the mean from the rules a wrong answer usually follows instead: every rank
below (a unanimous vote, the max), any rank below (the min), rank 0's (or rank 1's) own loss,
the sum, and (a last case whose mean equals its threshold exactly) mean <= threshold. When the
answers disagree with the mean, the message names the rule they follow."""

import time

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError

THRESHOLD = 1.2
EXACT = 1.0  # the threshold of the last case, whose mean equals it exactly (in binary too)
# (losses per rank, threshold): rank r uses losses[r % 2]. More cases have only rank 0 below the
# threshold (4) than only rank 1 (2), so in a branch-guarded collective at least one call of
# rank 0 is never paired by rank 1, whatever the order: it times out.
CASES = [
    ([0.5, 0.7], THRESHOLD),  # mean below; the sum is not
    ([1.5, 2.5], THRESHOLD),  # both above
    ([0.5, 1.5], THRESHOLD),  # mean below, rank 1 above: not "every rank below", not "rank 1's"
    ([1.5, 0.5], THRESHOLD),  # mean below, rank 0 above: not "every rank below", not "rank 0's"
    ([1.0, 2.0], THRESHOLD),  # mean above, rank 0 below: not "any rank below", not "rank 0's"
    ([2.0, 0.8], THRESHOLD),  # mean above, rank 1 below: not "any rank below", not "rank 1's"
    ([1.1, 1.9], THRESHOLD),  # mean above, rank 0 below
    ([0.5, 1.5], EXACT),  # mean exactly at the threshold: not below it (not "<=")
]

# rule name -> decision from the ranks' losses and the threshold (the mistakes the message can
# name)
RULES = {
    "every rank's loss below the threshold (a unanimous vote, or the max)": lambda c, t: max(c) < t,
    "any rank's loss below the threshold (the min)": lambda c, t: min(c) < t,
    "rank 0's own loss (rank 0 decides alone)": lambda c, t: c[0] < t,
    "rank 1's own loss": lambda c, t: c[1] < t,
    "the sum of the losses, not divided by the number of ranks": lambda c, t: sum(c) < t,
    "mean <= threshold (a mean equal to the threshold counted as below it)": lambda c, t: (
        sum(c) / len(c) <= t
    ),
}


def _follows(answers: list[bool], cases: list[tuple[list[float], float]]) -> str:
    for rule, decide in RULES.items():
        if all(a == decide(c, t) for a, (c, t) in zip(answers, cases, strict=True)):
            return rule
    return ""


def run(ctx: Ctx) -> None:
    fn = ctx.attr("should_stop")
    answers: list[bool] = []
    error = ""
    start = time.monotonic()
    for case, threshold in CASES:
        try:
            answers.append(bool(ctx.call(fn, case[ctx.rank % 2], threshold)))
        except UserCodeError as e:
            error = f"case {case}, threshold {threshold}: {e}"
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
    split = [CASES[i][0] for i in range(n) if len({a[i] for a in every}) > 1]
    detail = f"same decision on every rank in {n}/{len(CASES)} cases"
    if split:
        first = next(i for i in range(n) if len({a[i] for a in every}) > 1)
        answers = [a[first] for a in every]
        detail = (
            f"ranks disagree for losses {split[0]} (per rank): {answers}; expected one decision "
            "on every rank. Likely cause: a rank decides from its own loss, or from a "
            "collective the other rank did not join at the same point"
        )
    ctx.check("ranks_agree", not split and n == len(CASES), detail)
    mean = [sum(c[r % 2] for r in range(ctx.world_size)) / ctx.world_size for c, _ in CASES]
    limit = [t for _, t in CASES]
    wrong = [
        f"rank {r}, losses {CASES[i][0]}: returned {a[i]}, but mean {mean[i]:.2f} < {limit[i]} "
        f"is {mean[i] < limit[i]}"
        for r, a in enumerate(every) for i in range(n) if a[i] != (mean[i] < limit[i])
    ]  # fmt: skip
    ok = not wrong and n == len(CASES)
    detail = f"{n}/{len(CASES)} cases decided by the mean"
    if wrong:
        rule = "" if split else _follows(every[0][:n], CASES[:n])
        cause = (
            f"the decisions follow {rule}, not mean < threshold"
            if rule
            else "the decision is not the mean of every rank's loss compared with the threshold"
        )
        detail = f"{'; '.join(wrong[:2])}. Likely cause: {cause}"
    elif n < len(CASES):
        detail = f"only {n}/{len(CASES)} cases returned on every rank (see no_hang)"
    ctx.check("uses_the_mean", ok, detail)

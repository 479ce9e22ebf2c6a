"""The interview plan against plain FSRS, on simulated learners (drill.plan.simulate).

For interviews 7, 10, 14 and 30 days out, daily budgets of 30, 45 and 60 minutes, learners
whose true memory follows the FSRS-6 defaults or one of three other parameter sets, and a few
seeds each, runs the bundled cards under
  FSRS  plain FSRS at retention 0.9, the settings' 20 new cards a day in deck order;
  plan  the interview plan (role training-infra): drill.review.deadline's overlay and quota;
each twice: a learner who stops for the day at the budget (recall is compared between these:
the same minutes a day for both, so the same daily workload), and one who does everything the
app shows that day (how far over the budget the day's queue goes).

Targets, each printed beside its figure:
  T1  plan recall on the date >= 0.90 where the budget can introduce every card (the plan's own
      coverage says so on day 0);
  T2  plan recall >= plain FSRS + 5 points at the same daily minute budget;
  T3  no day of the plan's queue more than 10 % over the budget.
The fsrs-rs column is fsrs-rs's own simulator running plain FSRS on a deck of the same size
with the same budget (default parameters only; a cross-check of the FSRS column).

    python benchmarks/interview_plan.py [--quick] [--seeds 3] [--jobs 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drill.plan.learner import PARAMETER_SETS
from drill.plan.simulate import (
    RunResult,
    Scenario,
    SimCards,
    bundled_cards,
    coverable,
    fsrs_rs_baseline,
    simulate,
)

DAYS = (7, 10, 14, 30)
BUDGETS = (30, 45, 60)
_CARDS: SimCards | None = None


def _init() -> None:
    global _CARDS
    _CARDS = bundled_cards()


def _run(scenario: Scenario) -> RunResult:
    return simulate(scenario, _CARDS)


def _mean(values: Iterable[float]) -> float:
    return statistics.fmean(list(values))


def _mark(ok: bool | None) -> str:
    return "n/a" if ok is None else ("ok" if ok else "MISS")


# Plain FSRS given the plan's minutes (T2 "at the same total workload"), learners who stop at
# the budget: label -> (desired retention, new cards a day). "fsrs-fill": no new-card limit,
# so the learner spends the whole budget as the plan's learner may; "fsrs-r95": retention 0.95
# (more reviews for the same cards).
FAIR_FSRS = {"fsrs-fill": (0.9, 10_000), "fsrs-r95": (0.95, 20)}


def label_of(scenario: Scenario) -> str:
    if scenario.policy == "plan":
        return "plan"
    for label, (retention, new) in FAIR_FSRS.items():
        if (scenario.retention, scenario.new_per_day) == (retention, new):
            return label
    return "fsrs"


def run_all(
    days: tuple[int, ...], budgets: tuple[int, ...], params: list[str], seeds: int, jobs: int
) -> dict[tuple[str, bool, int, int, str], list[RunResult]]:
    scenarios = [
        Scenario(policy, d, m, p, seed, stop)
        for d in days
        for m in budgets
        for p in params
        for seed in range(seeds)
        for policy in ("fsrs", "plan")
        for stop in (True, False)
    ]
    scenarios += [
        Scenario("fsrs", d, m, p, seed, True, retention=retention, new_per_day=new)
        for d in days
        for m in budgets
        for p in params
        for seed in range(seeds)
        for retention, new in FAIR_FSRS.values()
    ]
    with Pool(jobs, initializer=_init) as pool:
        results = pool.map(_run, scenarios, chunksize=4)
    grouped: dict[tuple[str, bool, int, int, str], list[RunResult]] = defaultdict(list)
    for result in results:
        s = result.scenario
        grouped[(label_of(s), s.stop_at_budget, s.days, s.minutes, s.params)].append(result)
    return grouped


def main_table(grouped, days, budgets, params, seeds, cards: SimCards) -> list[str]:
    lines = [
        "| days | min/day | learner | covers all | recall FSRS | fsrs-rs | recall plan | T1 >= .90"
        " | plan - FSRS | T2 >= +5 | never FSRS / plan | reviews/day FSRS mean/max"
        " | reviews/day plan mean/max | minutes total FSRS / plan"
        " | worst day over budget FSRS / plan | T3 <= 10 % |",
        "|" + "---|" * 16,
    ]
    for d in days:
        for m in budgets:
            covers = coverable(d, m, cards)
            for p in params:
                fsrs = grouped[("fsrs", True, d, m, p)]
                plan = grouped[("plan", True, d, m, p)]
                fsrs_full = grouped[("fsrs", False, d, m, p)]
                plan_full = grouped[("plan", False, d, m, p)]
                rf, rp = _mean(r.recall for r in fsrs), _mean(r.recall for r in plan)
                rs: float | str = "-"
                if p == "default":
                    n = len(cards.card_ids)
                    rs = _mean(fsrs_rs_baseline(n, d, m, s + 1, 20.0) for s in range(seeds))
                    rs = f"{rs:.3f}"
                t1 = (rp >= 0.90) if covers else None
                over_f = max(r.worst_over_budget for r in fsrs_full)
                over_p = max(r.worst_over_budget for r in plan_full)
                rev_f = [n for r in fsrs for n in r.reviews_per_day]
                rev_p = [n for r in plan for n in r.reviews_per_day]
                min_f = _mean(sum(r.minutes_per_day) for r in fsrs)
                min_p = _mean(sum(r.minutes_per_day) for r in plan)
                never_f = _mean(r.never_introduced for r in fsrs)
                never_p = _mean(r.never_introduced for r in plan)
                lines.append(
                    f"| {d} | {m} | {p} | {'yes' if covers else 'no'} | {rf:.3f} | {rs}"
                    f" | {rp:.3f} | {_mark(t1)} | {100 * (rp - rf):+.1f} pts"
                    f" | {_mark(rp - rf >= 0.05)} | {never_f:.0f} / {never_p:.0f}"
                    f" | {_mean(rev_f):.0f} / {max(rev_f)} | {_mean(rev_p):.0f} / {max(rev_p)}"
                    f" | {min_f:.0f} / {min_p:.0f} | {100 * over_f:+.0f} % / {100 * over_p:+.0f} %"
                    f" | {_mark(over_p <= 0.10)} |"
                )
    return lines


def fair_table(grouped, days, budgets, params) -> list[str]:
    """T2 at the same workload: the plan against plain FSRS given the plan's minutes, and the
    most any policy could gain over plain FSRS (recall cannot pass 1.0)."""
    lines = [
        "| days | min/day | learner | recall FSRS (0.9, 20/day) | ceiling +pts | plan"
        " | FSRS no new-card limit | FSRS retention 0.95 | minutes plan / no limit / 0.95"
        " | plan - best FSRS at <= plan's minutes | T2 fair >= +5 |",
        "|" + "---|" * 11,
    ]
    for d in days:
        for m in budgets:
            for p in params:
                rows = {
                    label: grouped[(label, True, d, m, p)] for label in ("fsrs", "plan", *FAIR_FSRS)
                }
                recall = {k: _mean(r.recall for r in v) for k, v in rows.items()}
                minutes = {k: _mean(sum(r.minutes_per_day) for r in v) for k, v in rows.items()}
                # the best FSRS variant that spent no more minutes than the plan (5 % slack);
                # when each spent more, the one that spent the least (marked *)
                variants = ("fsrs", *FAIR_FSRS)
                fair = [k for k in variants if minutes[k] <= 1.05 * minutes["plan"]]
                best = max(fair, key=recall.__getitem__) if fair else None
                best = best or min(variants, key=minutes.__getitem__)
                gain = recall["plan"] - recall[best]
                lines.append(
                    f"| {d} | {m} | {p} | {recall['fsrs']:.3f}"
                    f" | {100 * (1 - recall['fsrs']):+.1f} | {recall['plan']:.3f}"
                    f" | {recall['fsrs-fill']:.3f} | {recall['fsrs-r95']:.3f}"
                    f" | {minutes['plan']:.0f} / {minutes['fsrs-fill']:.0f}"
                    f" / {minutes['fsrs-r95']:.0f}"
                    f" | {100 * gain:+.1f} pts vs {best}{'' if fair else ' *'}"
                    f" | {_mark(gain >= 0.05)} |"
                )
    return lines


def topic_table(grouped, days, budgets) -> list[str]:
    """Recall on the date per topic area, default learner, FSRS / plan (none without it)."""
    if not any(key[4] == "default" for key in grouped):
        return ["(the default learner was not run)"]
    some = next(iter(grouped.values()))[0]
    areas = list(some.per_area)
    lines = [
        "| days | min/day | " + " | ".join(f"{a} FSRS / plan" for a in areas) + " |",
        "|" + "---|" * (2 + len(areas)),
    ]
    for d in days:
        for m in budgets:
            fsrs = grouped[("fsrs", True, d, m, "default")]
            plan = grouped[("plan", True, d, m, "default")]
            cells = [
                f"{_mean(r.per_area.get(a, 0.0) for r in fsrs):.2f} / "
                f"{_mean(r.per_area.get(a, 0.0) for r in plan):.2f}"
                for a in areas
            ]
            lines.append(f"| {d} | {m} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one date, one budget, one seed")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, help="also write the tables to this file")
    parser.add_argument("--days", type=int, nargs="+", help=f"dates out (default {DAYS})")
    parser.add_argument("--budgets", type=int, nargs="+", help=f"minutes (default {BUDGETS})")
    parser.add_argument("--learners", nargs="+", choices=list(PARAMETER_SETS),
                        help="parameter sets (default: all)")  # fmt: skip
    args = parser.parse_args()
    os.environ["TZ"] = "UTC"  # learner days in UTC: the same figures on every machine
    time.tzset()
    days, budgets, params, seeds = DAYS, BUDGETS, list(PARAMETER_SETS), args.seeds
    if args.quick:
        days, budgets, params, seeds = (10,), (45,), ["default"], 1
    days = tuple(args.days or days)
    budgets = tuple(args.budgets or budgets)
    params = list(args.learners or params)
    start = time.perf_counter()
    cards = bundled_cards()
    grouped = run_all(days, budgets, params, seeds, args.jobs)
    elapsed = time.perf_counter() - start
    command = "python benchmarks/interview_plan.py " + " ".join(sys.argv[1:])
    out = [
        f"# Interview plan vs plain FSRS ({len(cards.card_ids)} bundled cards)",
        "",
        f"`{command.strip()}`: {seeds} seed(s) per row, {elapsed:.0f} s, {args.jobs} process(es).",
        "Recall: mean true retrievability at 09:00 on the date, cards never introduced = 0;",
        "learners who stop at the budget (both policies: the same minutes a day). Worst day over",
        "budget: learners who do everything the app shows. Means over seeds; maxima over seeds.",
        "",
        *main_table(grouped, days, budgets, params, seeds, cards),
        "",
        "T2 at the same workload: plain FSRS given the plan's minutes (learners who stop at the",
        "budget; a variant counts when its total minutes are at most 5 % over the plan's). The",
        "ceiling is the most any policy could add to plain FSRS's recall (1.0 - FSRS). *: every",
        "FSRS variant spent more minutes than the plan; the one that spent the least is shown.",
        "",
        *fair_table(grouped, days, budgets, params),
        "",
        "Recall on the date per topic area (default learner):",
        "",
        *topic_table(grouped, days, budgets),
    ]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

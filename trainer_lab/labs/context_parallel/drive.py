"""context-parallel lab: the driver (torch-free): per-rank counts -> observations and checks."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext

TOLERANCE = 1e-10  # float64: the online softmax differs from one softmax by rounding only
METHODS = ("zigzag", "contiguous", "all_gather")


def work_imbalance(pairs: list[int]) -> float:
    """max / min pairs per rank: the step waits for the busiest rank."""
    return round(max(pairs) / min(pairs), 4) if min(pairs) else float("inf")


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.context_parallel.worker:main",
        {**run.params, "collective_timeout_s": 60},
    )
    r = run.report("context_parallel")
    ranks, length = r["ranks"], r["seq_len"]
    run.observe("seq_len", length)
    found: dict[str, dict[str, Any]] = {}
    for method in METHODS:
        per_rank = [rank[method] for rank in ranks]
        pairs = [p["pairs"] for p in per_rank]
        found[method] = {
            "chunks": r["layouts"]["contiguous" if method == "contiguous" else "zigzag"],
            "max_abs_diff": max(p["diff"] for p in per_rank),
            "pairs_per_rank": pairs,
            "work_imbalance": work_imbalance(pairs),
            "kv_bytes_received": [p["received"] for p in per_rank],
            "kv_peak_bytes": max(p["peak"] for p in per_rank),
        }
        for key, value in found[method].items():
            run.observe(f"{method}.{key}", value)
    leak = max(rank["zigzag"]["leak"] for rank in ranks)
    run.observe("zigzag.future_leak", leak)
    ring = found["zigzag"]
    run.observe("kv_fraction_received", round(ring["kv_bytes_received"][0] / r["kv_bytes"], 4))
    run.observe("causal_fraction", round(sum(ring["pairs_per_rank"]) / length**2, 4))
    runs = list(zip(*(rank["scaling"] for rank in ranks), strict=True))  # per length, per rank
    per_token = [round(sum(x["pairs"] for x in at) / at[0]["seq_len"], 4) for at in runs]
    run.observe("scaling.seq_lens", [at[0]["seq_len"] for at in runs])
    run.observe("scaling.pairs_per_token", per_token)
    run.observe("scaling.kv_bytes_per_rank", [at[0]["received"] for at in runs])
    run.observe("scaling.per_token_growth_4x", round(per_token[-1] / per_token[0], 4))

    diffs = {m: found[m]["max_abs_diff"] for m in METHODS}
    run.check(
        "matches_full_attention",
        max(diffs.values()) <= TOLERANCE,
        "max abs diff vs full causal attention on one process: "
        + ", ".join(f"{m} {d:.3g}" for m, d in diffs.items()),
    )
    run.check(
        "no_future_leak",
        leak <= TOLERANCE,
        f"K/V from position {length // 2} on replaced: outputs before it moved by at most "
        f"{leak:.3g}",
    )
    zig, cont = ring, found["contiguous"]
    run.check(
        "zigzag_balances_causal_work",
        max(zig["pairs_per_rank"]) == min(zig["pairs_per_rank"]),
        f"unmasked pairs per rank, zigzag {zig['chunks']}: {zig['pairs_per_rank']} (max/min "
        f"{zig['work_imbalance']}); contiguous {cont['chunks']}: {cont['pairs_per_rank']} "
        f"(max/min {cont['work_imbalance']})",
    )

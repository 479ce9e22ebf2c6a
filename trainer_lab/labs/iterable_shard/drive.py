"""iterable-shard lab: the driver (torch-free): count every id each variant yielded."""

from __future__ import annotations

from collections import Counter

from trainer_lab.context import LabContext
from trainer_lab.labs.iterable_shard import VARIANTS

# A gloo/CPU lab on any machine: its collectives use CPU tensors, and the numbers it reports
# should not change with the hardware it happens to run on.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch(
        "trainer_lab.labs.iterable_shard.worker:main",
        {**p, "collective_timeout_s": 60},
        env=CPU_ONLY,
    )
    per_rank = run.report("iterable_shard")["per_rank"]
    world, workers = run.world_size, p["num_workers"]
    summary = {}
    for variant in VARIANTS:
        yielded = [sample for rank in per_rank for sample, _ in rank[variant]]
        counts = Counter(yielded)
        copies = set(counts.values())
        uniform = len(counts) == p["samples"] and len(copies) == 1
        per_id = copies.pop() if uniform else None
        summary[variant] = {
            "yielded": len(yielded),
            "distinct": len(counts),
            "duplicates": len(yielded) - len(counts),
            "missing": p["samples"] - len(counts),
            "max_copies": max(counts.values()),
            "copies_per_id": per_id,
            "copies_equal_ranks_times_workers": per_id == world * workers,
            "copies_equal_workers": per_id == workers,
        }
        for key, value in summary[variant].items():
            run.observe(f"{variant}.{key}", value)
    readers = {(r, w) for r, rank in enumerate(per_rank) for _, w in rank["fixed"]}
    run.observe("workers_seen", len(readers))
    fixed, naive, rank_only = summary["fixed"], summary["naive"], summary["rank_only"]
    run.check(
        "fixed_exactly_once",
        fixed["duplicates"] == 0 and fixed["missing"] == 0,
        f"split by rank and worker: {fixed['yielded']} yields, {fixed['duplicates']} "
        f"duplicates, {fixed['missing']} missing of {p['samples']} ids, from {len(readers)} "
        f"readers ({world} ranks x {workers} workers)",
    )
    run.check(
        "naive_duplicates_everywhere",
        naive["copies_equal_ranks_times_workers"],
        f"not split: each id came {naive['copies_per_id']} times (max {naive['max_copies']}); "
        f"{world} ranks x {workers} workers = {world * workers}",
    )
    run.check(
        "rank_only_duplicates_per_worker",
        rank_only["copies_equal_workers"],
        f"split by rank only: each id came {rank_only['copies_per_id']} times (max "
        f"{rank_only['max_copies']}); workers per rank: {workers}",
    )

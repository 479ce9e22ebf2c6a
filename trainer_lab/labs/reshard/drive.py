"""reshard lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

import math
from collections import Counter

from trainer_lab.catalogue_types import ParamError
from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError

WORKER = "trainer_lab.labs.reshard.worker"


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ParamError(f"load_world_sizes: {text!r} is not a comma-separated list") from None
    if not sizes or any(s < 1 or s > 16 for s in sizes):
        raise ParamError(f"load_world_sizes: {text!r}: sizes must be in [1, 16]")
    return sizes


def count(before: list[int], after: list[int], n: int) -> dict[str, int]:
    seen = Counter(before) + Counter(after)
    return {
        "duplicates": sum(c - 1 for c in seen.values() if c > 1),
        "skipped": sum(1 for i in range(n) if seen[i] == 0),
    }


def drive(run: LabContext) -> None:
    p = run.params
    try:
        loads = sorted(set(parse_sizes(p["load_world_sizes"])))
    except ParamError as error:
        raise LabError(str(error)) from None
    w_save = run.world_size
    batch = 2 * math.lcm(w_save, *loads)
    n_samples = batch * max(p["steps"] + 2, 8)
    cfg = TrainConfig(global_batch=batch, n_samples=n_samples, drop_last=False)
    checkpoint = run.out_dir / "dcp" / f"step-{p['steps']:06d}"
    run.plan(2)
    spec = {"config": cfg.to_dict(), "checkpoint": str(checkpoint), "collective_timeout_s": 30}
    run.launch(f"{WORKER}:save", {**spec, "steps": p["steps"]}, variant="save")
    saved = run.events("save")
    before = [
        i
        for evs in saved.values()
        for e in evs
        if e["event"] == "consumed"
        for i in e["sample_ids"]
    ]
    state = next(e for e in saved.get(0, []) if e["event"] == "data_state")
    reference = next(e for e in saved.get(0, []) if e["event"] == "digests")
    run.observe("save_world_size", w_save)
    run.observe("global_batch", batch)
    run.observe("global_consumed", state["global_consumed"])
    run.observe("tensors", len(reference["digests"]))
    run.observe("checkpoint_files", reference["files"])
    identical_all, exact_all, broken_all = True, True, True
    details, data_details = [], []
    # One launch of max(loads) processes; each load size is a group of ranks 0..w-1 in it.
    run.launch(
        f"{WORKER}:load",
        {
            **spec,
            "sizes": loads,
            "load_state": p["load_state"],
            "global_consumed": state["global_consumed"],
            "local_consumed": state["local_consumed"],
        },
        variant="load",
        world_size=max(loads),
    )
    events = run.events("load")
    for w in loads:
        got = next(
            (e["digests"] for e in events.get(0, []) if e["event"] == "digests" and e["w"] == w),
            {},
        )
        differing = sorted(
            k
            for k in set(got) | set(reference["digests"])
            if got.get(k) != reference["digests"].get(k)
        )
        resumes = [
            e for evs in events.values() for e in evs if e["event"] == "resume" and e["w"] == w
        ]
        if len(resumes) != w:
            raise LabError(f"load at W={w}: {len(resumes)} of {w} ranks reported their data")
        modes = {
            mode: count(before, [i for r in resumes for i in r[f"{mode}_ids"]], n_samples)
            for mode in ("global", "per_rank")
        }
        run.observe(f"loads.w{w}.tensors_identical", not differing)
        run.observe(f"loads.w{w}.differing_tensors", differing[:20])
        run.observe(f"loads.w{w}.per_rank_batch", resumes[0]["per_rank_batch"])
        for mode, counts in modes.items():
            for key, value in counts.items():
                run.observe(f"loads.w{w}.{mode}.{key}", value)
        identical_all &= not differing
        judged = modes[p["resume_offset"]]
        exact_all &= judged["duplicates"] == 0 and judged["skipped"] == 0
        naive = modes["per_rank"]
        if w != w_save:
            broken_all &= naive["duplicates"] + naive["skipped"] > 0
        details.append(f"W={w_save}->{w}: {len(differing)} of {len(reference['digests'])} differ")
        data_details.append(
            f"W={w_save}->{w} (per-rank batch {batch // w_save}->{batch // w}): "
            f"{p['resume_offset']} offset {judged['duplicates']} dup/{judged['skipped']} skipped; "
            f"per-rank counters {naive['duplicates']} dup/{naive['skipped']} skipped"
        )
    run.check("tensors_identical_after_load", identical_all, "; ".join(details))
    run.check("exactly_once", exact_all, "; ".join(data_details))
    changed = [w for w in loads if w != w_save]
    run.check(
        "per_rank_counters_break",
        broken_all and bool(changed),
        "; ".join(data_details) if changed else "no load at another world size",
    )

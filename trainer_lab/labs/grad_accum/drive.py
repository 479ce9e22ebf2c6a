"""grad-accum lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError


def drive(run: LabContext) -> None:
    p = run.params
    k, micro = p["micro_batches"], p["micro_batch"]
    cfg = TrainConfig(
        d_in=16,
        hidden=64,
        depth=3,
        d_out=4,
        steps=p["steps"],
        lr=0.05,
        global_batch=k * micro * run.world_size,
        n_samples=4096,
    )
    run.plan(1)
    run.launch(
        "trainer_lab.labs.grad_accum.worker:main",
        {
            "config": cfg.to_dict(),
            "collective_timeout_s": 30,
            "micro_batches": k,
            "micro_batch": micro,
            "sabotage": p["sabotage"],
            "bucket_cap_mb": 0.01,  # small buckets: several all-reduces per sync round
        },
    )
    events = run.events()
    if len(events) != run.world_size:
        raise LabError(f"expected events from {run.world_size} ranks, got {len(events)}")
    steps = [e for e in events[0] if e["event"] == "accum_step"]
    if len(steps) != p["steps"]:
        raise LabError(f"rank 0 logged {len(steps)} of {p['steps']} steps")
    per_step = {n: max(s["allreduces"][n] for s in steps) for n in ("big", "accum", "naive")}
    buckets = per_step["big"]
    saved_rounds = (per_step["naive"] - per_step["accum"]) / buckets if buckets else 0.0
    gdiff = {
        n: max(
            s["rel_grad_diff"][n]
            for evs in events.values()
            for s in evs
            if s["event"] == "accum_step"
        )
        for n in ("accum", "naive")
    }
    wdiff = steps[-1]["weight_diff"]["accum"]
    loss_diff = max(abs(s["losses"]["accum"] - s["losses"]["big"]) for s in steps)
    for name, value in per_step.items():
        run.observe(f"allreduces_per_step.{name}", value)
    run.observe("buckets", buckets)
    run.observe("saved_allreduce_rounds", saved_rounds)
    run.observe("max_rel_grad_diff.accum", gdiff["accum"])
    run.observe("max_rel_grad_diff.naive", gdiff["naive"])
    run.observe("max_weight_diff.accum", wdiff)
    run.observe("max_loss_diff", loss_diff)
    tol = p["tolerance"]
    run.check(
        "accum_equals_big_batch",
        gdiff["accum"] <= tol and wdiff <= tol,
        f"K={k} x {micro} vs one batch of {k * micro} per rank: max relative gradient "
        f"difference {gdiff['accum']:.2e}, final weight difference {wdiff:.2e} "
        f"(tolerance {tol:g}) over {len(steps)} SGD steps",
    )
    run.check(
        "k_minus_1_fewer_allreduces",
        per_step["accum"] == per_step["big"] and per_step["naive"] == k * per_step["accum"],
        f"bucket all-reduces per step: big batch {per_step['big']}, no_sync "
        f"{per_step['accum']}, without no_sync {per_step['naive']} ({buckets} buckets; "
        f"{saved_rounds:g} sync rounds saved, K-1 = {k - 1})",
    )

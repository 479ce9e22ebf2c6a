"""step-phases lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError
from trainer_lab.events import PHASES, steps_of
from trainer_lab.labs.step_phases import SCENARIO_STEPS
from trainer_lab.labs.step_phases.analysis import (
    detect_period,
    find_spikes,
    median,
    name_straggler,
    percentile,
)

WARMUP = 2  # first steps allocate buffers and build plans; they are left out of the statistics


def _config(run: LabContext, scenario: str, steps: int) -> TrainConfig:
    w = run.world_size
    return TrainConfig(
        d_in=32,
        hidden=256,
        depth=3,
        d_out=8,
        global_batch=16 * w,
        n_samples=max(1024, 16 * w * (steps + 4)),
        grad_sync="explicit",  # the all-reduce is its own phase (DDP would hide it in backward)
        steps=steps,
        warmup_steps=2,
    )


def _per_rank(events: dict[int, list[dict[str, Any]]], label: str) -> dict[int, list[dict]]:
    runs = {
        rank: [r for r in steps_of(evs, label) if r["step"] > WARMUP]
        for rank, evs in events.items()
    }
    if not runs or any(not records for records in runs.values()):
        raise LabError(f"run {label!r}: some rank logged no steps")
    return runs


def _step_s(record: dict[str, Any]) -> float:
    return sum(record["phases"].values())


def summarise(
    run: LabContext, events: dict[int, list[dict[str, Any]]], label: str, prefix: str
) -> dict[str, Any]:
    """Phase medians per rank, p50/p99 of the job's step time, samples/s; observed under prefix."""
    runs = _per_rank(events, label)
    ranks: dict[str, dict[str, float]] = {}
    for rank, records in sorted(runs.items()):
        medians = {f"{p}_ms": 1e3 * median([r["phases"][p] for r in records]) for p in PHASES}
        medians["step_ms"] = 1e3 * median([_step_s(r) for r in records])
        ranks[str(rank)] = {k: round(v, 3) for k, v in medians.items()}
    job: dict[int, float] = defaultdict(float)  # the job moves at its slowest rank's pace
    for records in runs.values():
        for r in records:
            job[r["step"]] = max(job[r["step"]], _step_s(r))
    p50 = percentile(list(job.values()), 50)
    batch = sum(len(runs[rank][0]["sample_ids"]) for rank in runs)
    summary = {
        "ranks": ranks,
        "step_ms": {
            "p50": round(1e3 * p50, 3),
            "p99": round(1e3 * percentile(list(job.values()), 99), 3),
        },
        "samples_per_s": round(batch / p50, 1) if p50 > 0 else 0.0,
        "data_wait_share": round(
            median([ranks[r]["data_wait_ms"] for r in ranks]) / max(1e-9, 1e3 * p50), 4
        ),
    }
    for key, value in summary.items():
        run.observe(f"{prefix}{key}", value)
    return {**summary, "job": dict(job)}


def drive(run: LabContext) -> None:
    p = run.params
    scenario = p["scenario"]
    steps = p["steps"] or SCENARIO_STEPS[scenario]
    if steps < WARMUP + 4:
        raise LabError(f"steps must be at least {WARMUP + 4} (got {steps})")
    delay_ms = p["loader_delay_ms"]
    if delay_ms < 0:
        delay_ms = 5.0 if scenario == "slow-loader" else 0.0
    slow_rank = p["slow_rank"] if p["slow_rank"] >= 0 else run.world_size - 1
    if slow_rank >= run.world_size:
        raise LabError(f"slow_rank {slow_rank} is not a rank of a world of {run.world_size}")
    inert = p["sabotage"] == "inert"
    cfg = _config(run, scenario, steps)
    run.plan(1)
    run.launch(
        "trainer_lab.labs.step_phases.worker:main",
        {
            "config": cfg.to_dict(),
            "collective_timeout_s": 60,
            "scenario": scenario,
            "loader_delay_s": delay_ms / 1e3,
            "workers": 0 if inert else p["workers"],
            "prefetch": p["prefetch"],
            "checkpoint_every": p["checkpoint_every"],
            "frozen_mb": p["frozen_mb"],
            "straggler_delay_s": 0.0 if inert else p["straggler_delay_ms"] / 1e3,
            "async_saves_sync": inert,
            "slow_rank": slow_rank,
        },
    )
    events = run.events()
    if len(events) != run.world_size:
        raise LabError(f"expected events from {run.world_size} ranks, got {len(events)}")
    {
        "baseline": _baseline,
        "slow-loader": _slow_loader,
        "checkpoint-stall": _checkpoint,
        "straggler": _straggler,
    }[scenario](run, events, slow_rank)


def _baseline(run: LabContext, events: dict[int, list[dict[str, Any]]], _slow: int) -> None:
    s = summarise(run, events, "baseline", "")
    share = s["data_wait_share"]
    run.check(
        "loader_not_bottleneck",
        share < 0.25,
        f"median data wait is {100 * share:.1f} % of the p50 step ({s['step_ms']['p50']:.2f} ms); "
        f"{s['samples_per_s']:.0f} samples/s",
    )


def _slow_loader(run: LabContext, events: dict[int, list[dict[str, Any]]], _slow: int) -> None:
    serial = summarise(run, events, "serial", "serial.")
    fast = summarise(run, events, "prefetch", "prefetch.")
    speedup = serial["step_ms"]["p50"] / max(fast["step_ms"]["p50"], 1e-9)
    run.observe("speedup", round(speedup, 2))
    wait_serial = median([r["data_wait_ms"] for r in serial["ranks"].values()])
    wait_fast = median([r["data_wait_ms"] for r in fast["ranks"].values()])
    run.check(
        "serial_loader_dominates",
        serial["data_wait_share"] >= 0.5,
        f"without workers data wait is {100 * serial['data_wait_share']:.0f} % of the step",
    )
    workers = run.params["workers"]
    run.check(
        "prefetch_recovers",
        wait_fast <= wait_serial / 3 and speedup >= 2,
        f"{workers} workers x prefetch {run.params['prefetch']}: data wait {wait_serial:.1f} -> "
        f"{wait_fast:.1f} ms, p50 step {serial['step_ms']['p50']:.1f} -> "
        f"{fast['step_ms']['p50']:.1f} ms ({speedup:.1f}x)",
    )


def _stall(job: dict[int, float], every: int) -> float:
    """Mean excess (over the median step) of the steps that save, in ms."""
    if not every:
        return 0.0
    mid = median(list(job.values()))
    saves = [t - mid for step, t in job.items() if step % every == 0]
    return 1e3 * sum(saves) / len(saves) if saves else 0.0


def _checkpoint(run: LabContext, events: dict[int, list[dict[str, Any]]], _slow: int) -> None:
    every = run.params["checkpoint_every"]
    sync = summarise(run, events, "sync", "sync.")
    asyn = summarise(run, events, "async", "async.")
    spikes = find_spikes(sync["job"])
    found = detect_period(spikes, sorted(sync["job"]))
    run.observe("sync.spike_steps", spikes)
    run.observe("sync.period", found.period if found else 0)
    stall_sync = _stall(sync["job"], every)
    stall_async = _stall(asyn["job"], every)
    drains = [e["seconds"] for evs in events.values() for e in evs if e["event"] == "drain"]
    run.observe("sync.stall_ms", round(stall_sync, 3))
    run.observe("async.stall_ms", round(stall_async, 3))
    run.observe("async.drain_ms", round(1e3 * max(drains, default=0.0), 3))
    waits = [e["waited_s"] for evs in events.values() for e in evs if e["event"] == "save"]
    waited_ms = 1e3 * max(waits, default=0.0)
    run.observe("async.max_wait_previous_ms", round(waited_ms, 3))
    # what the background write costs the steps around it (it shares the host's CPU)
    run.observe("sync.total_s", round(sum(sync["job"].values()), 3))
    run.observe("async.total_s", round(sum(asyn["job"].values()) + max(drains, default=0.0), 3))
    reduction = 1 - stall_async / stall_sync if stall_sync > 0 else 0.0
    run.observe("stall_reduction", round(reduction, 3))
    run.check(
        "period_detected",
        found is not None and every > 0 and found.period == every,
        (
            f"spikes at steps {spikes}: period {found.period} found from step times "
            f"({found.hits} hits, {100 * found.explained:.0f} % of spikes), "
            f"saves every {every or 'never'}"
        )
        if found
        else f"no regular spike period in {len(sync['job'])} step times "
        f"({len(spikes)} spike(s)); saves every {every or 'never'}",
    )
    run.check(
        "async_removes_stall",
        stall_sync > 0 and stall_async <= 0.5 * stall_sync,
        f"checkpoint steps exceed the median step by {stall_sync:.1f} ms with DCP save and "
        f"{stall_async:.1f} ms with async_save ({100 * reduction:.0f} % less; at most "
        f"{waited_ms:.1f} ms of it waiting for the previous save to finish)",
    )


def _straggler(run: LabContext, events: dict[int, list[dict[str, Any]]], slow_rank: int) -> None:
    even = summarise(run, events, "even", "even.")
    slow = summarise(run, events, "straggler", "straggler.")
    own = {
        int(r): v["step_ms"] - v["grad_sync_ms"] for r, v in slow["ranks"].items()
    }  # the rank's own work, without waiting for peers
    named = name_straggler(own)
    growth = {
        r: round(slow["ranks"][r]["grad_sync_ms"] - even["ranks"][r]["grad_sync_ms"], 3)
        for r in slow["ranks"]
    }
    run.observe("straggler.named_rank", -1 if named is None else named)
    # The slowed rank is a param; whether the breakdown finds it is the observation.
    run.observe("straggler.named_is_slow_rank", named is not None and named == slow_rank)
    run.observe("straggler.grad_sync_growth_ms", growth)
    delay_ms = run.params["straggler_delay_ms"]
    named_text = "none" if named is None else str(named)
    slowed_text = str(slow_rank) if delay_ms else "none"
    run.check(
        "straggler_named",
        named == slow_rank and delay_ms > 0,
        "own work per rank (step - grad_sync, ms): "
        + ", ".join(f"{r}: {v:.1f}" for r, v in sorted(own.items()))
        + f"; named {named_text}, slowed {slowed_text}",
    )
    peers = [r for r in growth if int(r) != slow_rank]
    waited = all(growth[r] >= 0.5 * delay_ms for r in peers) and delay_ms > 0
    run.check(
        "peers_wait_in_grad_sync",
        waited,
        "grad_sync median growth per rank (ms): "
        + ", ".join(f"{r}: {growth[r]:+.1f}" for r in sorted(growth, key=int))
        + f" for a {delay_ms:g} ms delay on rank {slow_rank}",
    )

"""nan-hunt lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

import math
import re
from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError

PER_RANK = 8


def _num(value: Any) -> float:
    return float(value)  # "inf" / "nan" strings from the worker become floats again


def drive(run: LabContext) -> None:
    p = run.params
    w = run.world_size
    k = p["corrupt_step"]
    if k > p["steps"]:
        raise LabError(f"corrupt_step {k} is after the last step {p['steps']}")
    sab = p["sabotage"]
    corrupt_id = -1 if sab == "no_corruption" else ((k - 1) * w + (w - 1)) * PER_RANK + 3
    cfg = TrainConfig(
        steps=p["steps"], global_batch=PER_RANK * w, n_samples=PER_RANK * w * (p["steps"] + 1)
    )
    run.plan(1)
    run.launch(
        "trainer_lab.labs.nan_hunt.worker:main",
        {
            "config": cfg.to_dict(),
            "collective_timeout_s": 60,
            "corrupt_id": corrupt_id,
            "corrupt_value": p["corrupt_value"],
            "guard": sab != "no_guard",
            "sabotage": sab,
            "lr_steps": p["lr_steps"],
        },
    )
    events = run.events()
    if len(events) != w:
        raise LabError(f"expected events from {w} ranks, got {len(events)}")
    steps = sorted((e for e in events[0] if e["event"] == "step"), key=lambda e: e["step"])
    global_loss = {e["step"]: _num(e["global_loss"]) for e in steps}
    nonfinite = [s for s, v in global_loss.items() if not math.isfinite(v)]
    first_bad = nonfinite[0] if nonfinite else 0
    skipped = sorted({e["step"] for e in steps if e["skipped"]})
    reported = sorted(
        {
            i
            for evs in events.values()
            for e in evs
            if e["event"] == "nonfinite"
            for i in e["sample_ids"]
        }
    )
    after = [s for s in nonfinite if s > k]
    replay = next((e for e in events[0] if e["event"] == "replay"), {})
    lr_runs = {
        e["name"]: {key: v for key, v in e.items() if key not in ("event", "rank", "time", "name")}
        for e in events[0]
        if e["event"] == "lr_run"
    }
    if len(lr_runs) != 5:
        raise LabError("the worker did not report every LR run")
    run.observe("corrupt_sample_id", corrupt_id)
    run.observe("first_nonfinite_step", first_bad)
    run.observe(
        "grad_norm_history", [round(_num(e["grad_norm"]), 4) for e in steps if e["step"] < k]
    )
    run.observe("skipped_steps", skipped)
    run.observe("reported_sample_ids", reported)
    run.observe("nonfinite_after_k", len(after))
    # Where the corruption went in is a param; when the loss shows it, and whether the guard
    # names that very sample, are what the run observes.
    run.observe("nonfinite_lag_steps", first_bad - k if first_bad else None)
    run.observe("guard_named_corrupt_sample", corrupt_id >= 0 and reported == [corrupt_id])
    run.observe("anomaly.op", replay.get("op"))
    run.observe("anomaly.first_nonfinite_module", replay.get("first_nonfinite_module"))
    run.observe("anomaly.message", replay.get("message"))
    run.observe("lr", lr_runs)
    ratios = {
        name: _num(lr_runs[f"adam_{name}"]["max_grad_norm"])
        / _num(lr_runs[f"adam_{name}"]["first_grad_norm"])
        for name in ("no_warmup", "warmup")
    }
    run.observe("spike_ratio.no_warmup", round(ratios["no_warmup"], 2))
    run.observe("spike_ratio.warmup", round(ratios["warmup"], 2))

    run.check(
        "corrupt_sample_breaks_loss",
        first_bad == k and corrupt_id >= 0,
        f"sample {corrupt_id} ({p['corrupt_value']} in one feature) sits in step {k}'s batch on "
        f"rank {w - 1}; first non-finite global loss at step {first_bad or 'none'}",
    )
    run.check(
        "guard_skips_and_names_sample",
        skipped == [k] and reported == [corrupt_id] and not after,
        f"skipped steps {skipped}, reported sample ids {reported} (corrupted {corrupt_id}), "
        f"{len(after)} non-finite losses after step {k}",
    )
    op = replay.get("op")
    run.check(
        "anomaly_names_op",
        bool(op) and re.fullmatch(r"\w+Backward\d*", op) is not None,
        f"anomaly detection: {replay.get('message') or 'nothing to replay'}; first non-finite "
        f"module output: {replay.get('first_nonfinite_module')}",
    )
    nw, wu = lr_runs["adam_no_warmup"], lr_runs["adam_warmup"]
    run.check(
        "lr_spike_without_warmup",
        ratios["no_warmup"] >= 10 and ratios["warmup"] * 5 <= ratios["no_warmup"],
        f"AdamW lr {nw['lr']}: grad norm {_num(nw['first_grad_norm']):.3g} -> max "
        f"{_num(nw['max_grad_norm']):.3g} without warmup ({nw['warmup_steps']} warmup steps), "
        f"max {_num(wu['max_grad_norm']):.3g} with {wu['warmup_steps']} warmup steps",
    )
    clip, free, adam = lr_runs["sgd_clip"], lr_runs["sgd_no_clip"], lr_runs["adam_clip"]
    bound = clip["lr"] * 1.0
    run.check(
        "clipping_bounds_update",
        _num(clip["max_update_norm"]) <= bound * (1 + 1e-3)
        and math.isfinite(_num(clip["final_loss"])),
        f"SGD lr {clip['lr']}: max update norm {_num(clip['max_update_norm']):.4g} with "
        f"clipping (bound lr x max_norm = {bound:g}), {_num(free['max_update_norm']):.4g} without "
        f"(final loss {free['final_loss']}); AdamW's max update is "
        f"{_num(adam['max_update_norm']):.4g} with clipping vs "
        f"{_num(nw['max_update_norm']):.4g} without: Adam normalises the step",
    )

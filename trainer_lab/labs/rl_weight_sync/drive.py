"""rl-weight-sync lab: the driver (torch-free): one launch, two runs, observations and checks."""

from __future__ import annotations

from collections import Counter
from typing import Any

from trainer_lab.context import LabContext, LabError
from trainer_lab.labs.rl_weight_sync import RUNS


def _max(values: list[float]) -> float | None:
    return max(values) if values else None


def summarise_run(reports: list[dict[str, Any]], learners: int, model: dict[str, int]) -> dict:
    """One run's observations from every rank's report (learners first, then generators)."""
    batches = [b for r in reports[:learners] for b in r["batches"]]
    audits = reports[0]["audits"]
    received = [s for r in reports[learners:] for s in r["received"]]
    lags = [b["lag"] for b in batches]
    last = max((b["iteration"] for b in batches), default=0)
    first = [b for b in batches if b["iteration"] == 0]
    rollouts = sum(b["rollouts"] for b in batches)
    per_sync = received[0] if received else {"bytes": 0, "elements": 0, "buckets": 0}
    return {
        "rollouts": rollouts,
        "lag": {
            "max": _max(lags),
            "min": min(lags) if lags else None,
            "counts": {str(k): v for k, v in sorted(Counter(lags).items())},
            "first_batch": _max([b["lag"] for b in first]),
        },
        "sync": {
            "count": len(reports[learners]["received"]) if len(reports) > learners else 0,
            "buckets": per_sync["buckets"],
            "bytes_per_sync": per_sync["bytes"],
            "elements_per_sync": per_sync["elements"],
            "bytes_over_model": round(per_sync["bytes"] / model["bytes"], 4),
        },
        "weights": {
            "audits": len(audits),
            "max_abs_diff": _max([a["max_abs_diff"] for a in audits]),
            "digest_mismatches": sum(1 for a in audits if not a["same_digest"]),
            "version_claimed_max": _max([a["claimed"] for a in audits]),
        },
        "logprob": {
            "tagged_max_abs_diff": _max([b["tagged"] for b in batches]),
            "current_max_abs_diff": _max([b["current"] for b in batches]),
            "teacher_forced_max_abs_diff": _max([b["teacher_forced"] for b in batches]),
        },
        "ratio": {
            "max_abs_dev": _max([b["ratio_dev"] for b in batches]),
            "clip_fraction": round(sum(b["clipped"] for b in batches) / max(rollouts, 1), 4),
        },
        "reward": {
            "first": round(sum(b["reward"] for b in first) / max(len(first), 1), 5),
            "last": round(
                sum(b["reward"] for b in batches if b["iteration"] == last)
                / max(sum(1 for b in batches if b["iteration"] == last), 1),
                5,
            ),
        },
        # for the checks, not observed
        "_lags_by_iteration": [(b["iteration"], b["lag"]) for b in batches],
        "_received": received,
    }


def summarise_decode(stats: list[dict[str, int]], batch: int) -> dict[str, Any]:
    steps = sum(s["steps"] for s in stats)
    tokens = sum(s["tokens"] for s in stats)
    ratios = [s["longest"] / (s["tokens"] / batch) for s in stats if s["tokens"]]
    return {
        "batches": len(stats),
        "rollouts": len(stats) * batch,
        "steps": steps,
        "tokens": tokens,
        "slot_utilisation": round(tokens / (steps * batch), 4) if steps else None,
        "longest_over_mean": round(sum(ratios) / len(ratios), 4) if ratios else None,
        "truncated": sum(s["truncated"] for s in stats),
    }


def drive(run: LabContext) -> None:
    p = run.params
    learners = p["learners"]
    generators = run.world_size - learners
    if generators < learners:
        raise LabError(
            f"learners {learners} needs at least as many generator ranks; world size "
            f"{run.world_size} leaves {generators}"
        )
    run.plan(1)
    run.launch("trainer_lab.labs.rl_weight_sync.worker:main", {**p, "collective_timeout_s": 30})
    r = run.report("rl_weight_sync")
    model = {"elements": r["model_elements"], "bytes": r["model_bytes"]}
    run.observe("learners", learners)
    run.observe("generators", generators)
    run.observe("model_elements", model["elements"])
    run.observe("model_bytes", model["bytes"])
    iterations = p["iterations"]
    summaries = {}
    decode_stats = []
    for name in RUNS:
        reports = sorted(r["runs"][name], key=lambda rep: rep["rank"])
        summary = summarise_run(reports, learners, model)
        summaries[name] = summary
        decode_stats += [s for rep in reports[learners:] for s in rep["decode"]]
        for key, value in summary.items():
            if not key.startswith("_"):
                run.observe(f"{name}.{key}", value)
    decode = summarise_decode(decode_stats, p["prompts"] * p["samples"])
    run.observe("decode", decode)
    on, off = summaries["on_policy"], summaries["one_step_off"]

    expected_audits = iterations * generators
    equal = all(
        s["weights"]["audits"] == expected_audits
        and s["weights"]["digest_mismatches"] == 0
        and s["weights"]["max_abs_diff"] == 0
        for s in summaries.values()
    )
    run.check(
        "weights_equal_after_sync",
        equal,
        "; ".join(
            f"{n}: {s['weights']['audits']} audits (of {expected_audits}), "
            f"{s['weights']['digest_mismatches']} digest mismatches, max |generator - learner| "
            f"{s['weights']['max_abs_diff']!r}"
            for n, s in summaries.items()
        ),
    )
    complete = all(
        len(s["_received"]) == iterations * generators
        and all(x["elements"] == model["elements"] for x in s["_received"])
        for s in summaries.values()
    )
    run.check(
        "sync_moves_every_parameter",
        complete,
        "; ".join(
            f"{n}: {s['sync']['elements_per_sync']} of {model['elements']} elements and "
            f"{s['sync']['bytes_per_sync']} B ({s['sync']['bytes_over_model']}x the fp32 model) "
            f"in {s['sync']['buckets']} bucket(s) per sync"
            for n, s in summaries.items()
        ),
    )
    on_ok = bool(on["_lags_by_iteration"]) and all(lag == 0 for _, lag in on["_lags_by_iteration"])
    off_ok = bool(off["_lags_by_iteration"]) and all(
        lag == (0 if it == 0 else 1) for it, lag in off["_lags_by_iteration"]
    )
    run.check(
        "rollout_lag_as_expected",
        on_ok and off_ok,
        f"on_policy lags {on['lag']['counts']} (all 0 expected); one_step_off lags "
        f"{off['lag']['counts']} (0 for the first batch, then exactly 1)",
    )
    tol = p["tolerance"]
    tagged = [s["logprob"]["tagged_max_abs_diff"] for s in summaries.values()]
    run.check(
        "recorded_logprobs_match_their_version",
        all(t is not None and t <= tol for t in tagged),
        f"max |recorded - recomputed with the tagged version| on_policy {tagged[0]!r}, "
        f"one_step_off {tagged[1]!r} (tolerance {tol:g}); with the learner's current weights: "
        f"{on['logprob']['current_max_abs_diff']!r} and {off['logprob']['current_max_abs_diff']!r}",
    )
    run.check(
        "no_rollout_truncated",
        decode["truncated"] == 0,
        f"{decode['truncated']} of {decode['rollouts']} rollouts cut short before EOS or the "
        f"{p['max_len']}-token cap; {decode['steps']} decode steps over {decode['batches']} "
        f"static batches, slot utilisation {decode['slot_utilisation']}",
    )

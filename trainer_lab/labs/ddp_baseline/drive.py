"""ddp-baseline lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from collections import defaultdict

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError
from trainer_lab.events import steps_of


def drive(run: LabContext) -> None:
    p = run.params
    cfg = TrainConfig(
        steps=p["steps"],
        global_batch=8 * run.world_size,
        n_samples=64 * run.world_size,
        grad_sync="none"
        if p["sabotage"] == "no_grad_sync" or p["grad_sync"] == "stale"
        else p["grad_sync"],
        log_grad_digest=True,
    )
    stale = p["grad_sync"] == "stale" and p["sabotage"] != "no_grad_sync"
    run.plan(1)
    run.launch(
        "trainer_lab.labs.ddp_baseline.worker:main",
        {"config": cfg.to_dict(), "collective_timeout_s": 20, "stale": stale},
    )
    events = run.events()
    if len(events) != run.world_size:
        raise LabError(f"expected events from {run.world_size} ranks, got {len(events)}")
    dist_losses: dict[int, list[float]] = defaultdict(list)
    digests: dict[int, set[str]] = defaultdict(set)
    for rank_events in events.values():
        for record in steps_of(rank_events, "distributed"):
            dist_losses[record["step"]].append(record["loss"])
            digests[record["step"]].add(record["grad_digest"])
    single = {r["step"]: r["loss"] for r in steps_of(events[0], "single")}
    if sorted(single) != sorted(dist_losses) or not single:
        raise LabError("distributed and single-process runs logged different steps")
    diffs = []
    for step, loss in single.items():
        global_loss = sum(dist_losses[step]) / len(dist_losses[step])
        diffs.append((abs(global_loss - loss), abs(global_loss - loss) / max(abs(loss), 1e-12)))
    compare = [e for e in events[0] if e["event"] == "compare"]
    finals = {
        e["weights_digest"]
        for rank_events in events.values()
        for e in rank_events
        if e["event"] == "final"
    }
    max_abs = max(d[0] for d in diffs)
    max_rel = max(d[1] for d in diffs)
    weight_diff = compare[0]["max_weight_diff"] if compare else float("inf")
    mismatched = [step for step, seen in sorted(digests.items()) if len(seen) != 1]
    tol = p["tolerance"]
    run.observe("max_loss_diff", max_abs)
    run.observe("max_rel_loss_diff", max_rel)
    run.observe("max_weight_diff", weight_diff)
    run.observe("grad_mismatch_steps", len(mismatched))
    run.observe("weights_identical_across_ranks", len(finals) == 1)
    run.observe("steps", len(single))
    run.observe("first_loss", single[min(single)])
    run.observe("last_loss", single[max(single)])
    if p["grad_sync"] == "stale":
        run.check(
            "stale_changes_the_trajectory",
            max_rel > tol,
            f"one-step-stale gradients: max relative loss difference {max_rel:.2e} from "
            f"synchronous single-process training over {len(single)} steps (tolerance {tol:g})",
        )
    else:
        run.check(
            "losses_match",
            max_rel <= tol,
            f"max relative loss difference {max_rel:.2e} over {len(single)} steps "
            f"(tolerance {tol:g})",
        )
        run.check(
            "weights_match",
            weight_diff <= tol,
            f"max final weight difference {weight_diff:.2e} (tolerance {tol:g})",
        )
    run.check(
        "grads_identical_across_ranks",
        not mismatched,
        "gradient digests equal on all ranks at every step"
        if not mismatched
        else f"ranks' gradients differ at {len(mismatched)} steps (first: step {mismatched[0]})",
    )
    run.check(
        "weights_identical_across_ranks",
        len(finals) == 1,
        f"{len(finals)} distinct final weight digest(s) across {run.world_size} ranks",
    )

"""slow-link lab: the driver (torch-free). Starts two nodes' agents (2 processes each), waits for
the unshaped timings, limits node 1's link (tc tbf; netem only for a delay, where it exists),
lets the workers go on, then fits alpha-beta per link and reads the counted link bytes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from trainer_lab.cluster.agents import AgentSpec
from trainer_lab.cluster.lab_run import NODES, cluster_lab, first_event
from trainer_lab.cluster.network import Cluster, Shaping
from trainer_lab.context import LabContext, LabError
from trainer_lab.labs.allreduce_cost.drive import fit_line

WORKER = Path(__file__).with_name("worker.py")
GO_FILE = "go"
MIN_BYTES = 16 * 1024
RATE_BAND = (0.5, 2.0)  # a fitted or predicted quantity within this factor of the configured one
AGENT_END_WAIT_S = 2.0
HIERARCHY_MAX = 0.8  # hierarchical crossing bytes at most this share of the flat one's


def message_sizes(max_kib: int) -> list[int]:
    """16 KiB, 64 KiB, ... by 4x up to max_kib (which is always included)."""
    sizes, size = [], MIN_BYTES
    while size < max_kib * 1024:
        sizes.append(size)
        size *= 4
    return [*sizes, max_kib * 1024]


def _shape(run: LabContext, cluster: Cluster) -> Shaping | None:
    """Limit node 1's link as the params ask (none under no_shaping); None in loopback mode."""
    p = run.params
    if cluster.mode != "netns":
        return None
    if p["sabotage"] == "no_shaping":
        return Shaping("none", None, None, None, ("sabotage no_shaping: link left at full speed",))
    delay = p["delay_ms"] or None
    shaping = cluster.shape(1, p["rate_mbit"], delay_ms=delay)
    run.progress(f"node 1's link limited to {p['rate_mbit']:g} Mbit/s ({shaping.mode})")
    return shaping


def drive(run: LabContext) -> None:
    p = run.params
    if run.world_size != 2 * NODES:
        raise LabError(f"world size {run.world_size}: this lab runs 2 nodes x 2 processes (4)")
    run.plan(2)
    sizes = message_sizes(p["max_kib"])
    agent = AgentSpec(WORKER, nproc_per_node=2, join_timeout_s=30)
    worker = {
        "sizes": sizes,
        "reps": p["reps"],
        "count_reps": p["count_reps"],
        "sabotage": p["sabotage"],
        "go_file": GO_FILE,
    }
    with cluster_lab(run, agent, worker, loopback=p["loopback"]) as lab:
        lab.wait_for(lambda: first_event(lab.events(), "unshaped") is not None, "unshaped timings")
        run.progress("unshaped timings done", advance=1)
        shaping = _shape(run, lab.cluster)
        netem = lab.cluster.netem
        partial = lab.out / (GO_FILE + ".part")
        partial.write_text("go")
        partial.replace(lab.out / GO_FILE)
        lab.wait_for(lambda: first_event(lab.events(), "report") is not None, "shaped timings")
        # the report is in: give the agents a moment to end on their own, then the block's end
        # kills what is left (their shutdown can take seconds that measure nothing)
        lab.agents.wait(time.monotonic() - lab.agents.started + AGENT_END_WAIT_S)
        report = first_event(lab.events(), "report")
        mode = lab.cluster.mode
        duration = time.monotonic() - lab.agents.started
    assert report is not None
    run.progress("measurements done", advance=1)
    _observe_shaping(run, mode, shaping, netem)
    run.observe("duration_s", round(duration, 3))
    _report(run, report, mode)


def _observe_shaping(run: LabContext, mode: str, shaping: Shaping | None, netem: bool) -> None:
    run.observe("shaping.mode", shaping.mode if shaping else "none")
    run.observe("shaping.netem", netem)
    notes = list(shaping.skipped) if shaping else ["loopback mode: no link to shape"]
    if mode == "netns" and not netem:
        notes.append("no netem in this kernel: bandwidth only (tbf), no delay or loss")
    run.observe("shaping.note", "; ".join(dict.fromkeys(notes)))
    run.observe("rate_mbit", run.params["rate_mbit"])


def _fit(run: LabContext, link: str, sizes: list[int], seconds: list[float]) -> float:
    """Observe the alpha-beta fit of one link; return beta (s per message byte)."""
    alpha, beta, r2 = fit_line([float(s) for s in sizes], seconds)
    run.observe(f"seconds.{link}", [round(s, 6) for s in seconds])
    run.observe(f"fit.{link}.alpha_us", round(alpha * 1e6, 1))
    run.observe(f"fit.{link}.beta_ns_per_byte", round(beta * 1e9, 4))
    run.observe(f"fit.{link}.r2", round(r2, 4))
    run.observe(f"fit.{link}.bandwidth_mbit", round(8 / beta / 1e6, 1) if beta > 0 else None)
    return beta


def _report(run: LabContext, r: dict[str, Any], mode: str) -> None:
    p = run.params
    sizes, reps = r["sizes"], r["count_reps"]
    run.observe("sizes_bytes", sizes)
    _fit(run, "intra", sizes, r["intra_s"]["node0"])
    _fit(run, "cross", sizes, r["cross_s"])
    shaped_beta = _fit(run, "shaped", sizes, r["shaped_s"])
    cross_over_intra = r["shaped_s"][-1] / r["intra_s"]["node0"][-1]
    run.observe("cross_over_intra", round(cross_over_intra, 2))
    run.observe("time_s.flat", round(r["flat_s"], 6))
    run.observe("time_s.hierarchical", round(r["hier_s"], 6))
    run.observe("results_agree", r["results_agree"])
    netns = mode == "netns"
    not_run = f"did not run: {mode} mode has no link of its own to shape or count"
    rate_bytes_s = p["rate_mbit"] * 1e6 / 8
    per_byte = max(r["cross_bytes"]) / sizes[-1] if netns else None
    link_mbit = per_byte * 8 / shaped_beta / 1e6 if per_byte and shaped_beta > 0 else None
    ratio = link_mbit / p["rate_mbit"] if link_mbit else None
    run.observe("link_bytes_per_message_byte", round(per_byte, 4) if per_byte else None)
    run.observe("shaped_link_mbit", round(link_mbit, 1) if link_mbit else None)
    run.observe("shaped_over_rate", round(ratio, 3) if ratio else None)
    low, high = RATE_BAND
    run.check(
        "shaped_beta_matches_rate",
        ratio is not None and low <= ratio <= high,
        f"the shaped link fits {link_mbit:.0f} Mbit/s ({per_byte:.3f} link bytes per message "
        f"byte / beta {shaped_beta * 1e9:.2f} ns/B) against {p['rate_mbit']:g} Mbit/s: "
        f"{ratio:.2f}x"
        if ratio is not None
        else not_run,
    )
    flat, hier = (sum(r["flat_bytes"]) / reps, sum(r["hier_bytes"]) / reps) if netns else (0, 0)
    predicted = max(r["flat_bytes"]) / reps / rate_bytes_s if netns else None
    pace = r["flat_s"] / predicted if predicted else None
    run.observe("crossing_bytes.flat", round(flat) if netns else None)
    run.observe("crossing_bytes.hierarchical", round(hier) if netns else None)
    run.observe("crossing_over_size.flat", round(flat / sizes[-1], 3) if netns else None)
    run.observe("crossing_over_size.hierarchical", round(hier / sizes[-1], 3) if netns else None)
    share = hier / flat if netns and flat else None
    run.observe("hierarchical_over_flat_bytes", round(share, 3) if share is not None else None)
    run.observe("flat_predicted_s", round(predicted, 6) if predicted else None)
    run.observe("flat_over_predicted", round(pace, 3) if pace else None)
    run.check(
        "slow_link_sets_the_pace",
        pace is not None and low <= pace <= high and cross_over_intra > 1,
        f"the flat all_reduce of {sizes[-1]:,} B took {r['flat_s'] * 1e3:.1f} ms; its busier "
        f"link direction carried {max(r['flat_bytes']) / reps:,.0f} B, {predicted * 1e3:.1f} ms "
        f"at {p['rate_mbit']:g} Mbit/s: {pace:.2f}x; cross-node / intra-node time "
        f"{cross_over_intra:.1f}x"
        if pace is not None and predicted is not None
        else not_run,
    )
    run.check(
        "hierarchical_crosses_fewer_bytes",
        share is not None and share <= HIERARCHY_MAX and r["results_agree"],
        f"per all_reduce of {sizes[-1]:,} B the link carried {flat:,.0f} B flat and {hier:,.0f} B "
        f"hierarchical ({share:.2f}x); the sums "
        f"{'agree' if r['results_agree'] else 'differ'}"
        if share is not None
        else not_run,
    )

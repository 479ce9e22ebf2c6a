"""partition lab: the driver (torch-free). Takes node 1's link down once both ranks passed
cut_after_step, then reads when each rank's collective failed and how each agent ended."""

from __future__ import annotations

import re
import time
from typing import Any

from trainer_lab.cluster.agents import AgentSpec
from trainer_lab.cluster.lab_run import (
    NODES,
    WORKER,
    agent_end,
    cluster_lab,
    error_kind,
    first_event,
    last_step,
)
from trainer_lab.cluster.real_nodes import RealPlan
from trainer_lab.context import LabContext, LabError

WAITED = 0.8  # a collective that failed before this share of its timeout did not wait for it
# monitored_barrier's error on rank 0: "Ranks 1, 3 failed to pass monitoredBarrier in 3000 ms";
# on another rank: "... received errors while waiting for send/recv from rank 0"
_MISSING = re.compile(r"Ranks? ([\d, ]+) failed to pass monitoredBarrier")
_ASK = re.compile(r"send/recv from rank (\d+)")
_ANY_RANK = re.compile(r"\brank\s*\d+", re.I)


def barrier_named_ranks(message: str) -> list[int]:
    """The ranks a monitored_barrier error names: those that did not arrive (rank 0's view),
    else the rank whose logs it points to (the others' view); [] when it names none."""
    missing = _MISSING.search(message)
    if missing:
        return [int(part) for part in re.findall(r"\d+", missing.group(1))]
    ask = _ASK.search(message)
    return [int(ask.group(1))] if ask else []


def names_a_rank(message: str) -> bool:
    """Whether an error's text names any rank (gloo's plain timeouts do not)."""
    return bool(_ANY_RANK.search(message))


def real_plan(p: dict[str, Any]) -> RealPlan:
    """The agents' settings and the workers' spec (also for one node on a real machine)."""
    agent = AgentSpec(WORKER, max_restarts=p["max_restarts"], join_timeout_s=10)
    worker = {
        "steps": p["steps"],
        "pg_timeout_s": p["pg_timeout_s"],
        "monitored_barrier": p["monitored_barrier"],
    }
    by_hand = (
        f"after step {p['cut_after_step']}, drop node 1's traffic to node 0 "
        "(e.g. `iptables -A INPUT -s NODE0 -j DROP` on node 1) and read the events"
    )
    return RealPlan(agent, worker, by_hand)


def drive(run: LabContext) -> None:
    p = run.params
    if p["cut_after_step"] >= p["steps"] - 1:
        raise LabError(f"cut_after_step {p['cut_after_step']} must be below steps - 1")
    run.plan(1)
    plan = real_plan(p)
    agent, worker = plan.agent, plan.worker
    cut = p["cut_after_step"]
    with cluster_lab(run, agent, worker) as lab:
        if lab.cluster.mode != "netns":
            raise LabError(f"a partition needs network namespaces ({lab.cluster.note})")
        lab.wait_for(
            lambda: min(last_step(lab.events(), node) for node in range(NODES)) >= cut,
            f"both nodes to pass step {cut}",
        )
        cut_after = last_step(lab.events(), 1)
        cut_at, cut_mono = time.time(), time.monotonic()
        if p["cut"]:
            lab.cluster.partition(1)
            run.progress(f"node 1's link is down after its step {cut_after}")
        lab.wait_for(lambda: lab.agents.poll()[0] is not None, "node 0's agent to end")
        elapsed = time.monotonic() - lab.agents.started
        lab.agents.wait(elapsed + min(p["agent_wait_s"], run.remaining_s()))
        codes = lab.agents.poll()  # an agent still running now is reported as running
        ended = dict(lab.agents.ended_at)
        logs = {node: lab.agents.log_text(node) for node in range(NODES)}
        events = lab.events()
        duration = time.monotonic() - lab.agents.started
    timeout = p["pg_timeout_s"]
    kinds: dict[int, str | None] = {}
    ratios: dict[int, float | None] = {}
    ends: dict[int, str] = {}
    for node in range(NODES):
        error = first_event(events, "collective_error", group_rank=node, attempt=0)
        kinds[node] = error_kind(error["message"]) if error else None
        waited = round(error["time"] - cut_at, 3) if error else None
        ratios[node] = round(waited / timeout, 3) if waited is not None else None
        ends[node] = agent_end(codes.get(node), logs[node])
        run.observe(f"error.node{node}", kinds[node])
        run.observe(f"error_s.node{node}", waited)
        run.observe(f"error_over_timeout.node{node}", ratios[node])
        run.observe(f"agent_end.node{node}", ends[node])
        at = ended.get(node)
        run.observe(f"agent_end_s.node{node}", round(at - cut_mono, 3) if at else None)
        if node == 0:
            run.observe("error_message.node0", error["message"][:200] if error else None)
    steps = [e["step"] for e in events if e["event"] == "step" and e["group_rank"] == 0]
    run.observe("cut_after_step", cut_after)
    run.observe("final_step", max(steps, default=0))
    run.observe("duration_s", round(duration, 3))
    run.progress(f"agents: node 0 {ends[0]}, node 1 {ends[1]}", advance=1)
    shown = ", ".join(f"node {n}: {kinds[n]} after {ratios[n]} x timeout" for n in kinds)
    run.check(
        "every_rank_timed_out",
        all(kind == "timeout" for kind in kinds.values()),
        f"collective errors: {shown}",
    )
    run.check(
        "waited_for_the_timeout",
        all(ratio is not None and ratio >= WAITED for ratio in ratios.values()),
        f"{shown} (pg timeout {timeout:g} s)",
    )
    run.check(
        "store_side_agent_reported_failure",
        ends[0] == "worker_failed",
        f"node 0's agent (it hosts the store): {ends[0]}",
    )
    run.check(
        "partitioned_agent_stuck",
        ends[1] == "running",
        f"node 1's agent, cut off from the store: {ends[1]} "
        f"{p['agent_wait_s']:g} s after node 0's agent ended",
    )
    _report_barrier(run, events, cut_at)


def _report_barrier(run: LabContext, events: list[dict[str, Any]], cut_at: float) -> None:
    """What monitored_barrier said after the all_reduce timed out, against the plain error."""
    start = first_event(events, "start", node=1, attempt=0)
    cut_off = start["rank"] if start else None
    run.observe("cut_off_rank", cut_off)
    named: dict[int, list[int]] = {}
    for node in range(NODES):
        barrier = first_event(events, "barrier_error", node=node, attempt=0)
        plain = first_event(events, "collective_error", node=node, attempt=0)
        named[node] = barrier_named_ranks(barrier["message"]) if barrier else []
        shown = ", ".join(str(rank) for rank in named[node])
        run.observe(f"barrier_named.node{node}", shown if barrier else None)
        run.observe(f"barrier_message.node{node}", barrier["message"][:200] if barrier else None)
        run.observe(
            f"barrier_error_s.node{node}", round(barrier["time"] - cut_at, 3) if barrier else None
        )
        run.observe(
            f"all_reduce_named_a_rank.node{node}", names_a_rank(plain["message"]) if plain else None
        )
    plain0 = first_event(events, "collective_error", node=0, attempt=0)
    run.check(
        "monitored_barrier_named_the_cut_off_rank",
        cut_off is not None
        and named[0] == [cut_off]
        and plain0 is not None
        and not names_a_rank(plain0["message"]),
        f"node 0's monitored_barrier named rank(s) {named[0] or 'none'}; the cut-off rank is "
        f"{cut_off}; its plain all_reduce error named "
        f"{'a rank' if plain0 and names_a_rank(plain0['message']) else 'none'}",
    )

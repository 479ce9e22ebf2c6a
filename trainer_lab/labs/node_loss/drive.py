"""node-loss lab: the driver (torch-free). Starts two nodes' agents, kills node 1's tree once
both ranks passed kill_after_step, then reads what the survivor and its agent did. With
`replacement`, a fresh node 1 starts once the survivor trains alone (min nodes 1) or at once
(min nodes 2); once both nodes trained at world size 2 the lab ends the job a few steps on."""

from __future__ import annotations

import time
from typing import Any

from trainer_lab.cluster.agents import AgentSpec
from trainer_lab.cluster.lab_run import (
    NODES,
    STOP_FILE,
    WORKER,
    ClusterLab,
    agent_end,
    cluster_lab,
    error_kind,
    first_event,
    last_step,
)
from trainer_lab.cluster.real_nodes import RealPlan
from trainer_lab.context import LabContext, LabError

REJOIN_STEPS = 2  # steps both nodes train at world size 2 before the lab ends a replaced job
STOP_MARGIN = 3  # the job ends this many steps past the newest step seen
# with a replacement the job runs until the lab stops it: steps is then a bound, not the end
REPLACEMENT_STEP_BOUND = 400


def _starts(events: list[dict[str, Any]], node: int, since: float) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "start" and e["node"] == node and e["time"] > since]


def _rejoined(events: list[dict[str, Any]], since: float) -> bool:
    """Both nodes' workers started at world size 2 after `since` and trained REJOIN_STEPS."""
    for node in range(NODES):
        starts = [e for e in _starts(events, node, since) if e["world_size"] == NODES]
        if not starts:
            return False
        pid = starts[-1]["pid"]
        if sum(1 for e in events if e["event"] == "step" and e["pid"] == pid) < REJOIN_STEPS:
            return False
    return True


def _replace(lab: ClusterLab, killed_at: float, alone_first: bool) -> float | None:
    """Start a fresh node 1 (after the survivor trains alone when alone_first), wait until both
    nodes trained at world size 2 (or node 0's agent ended), then end the job; return when the
    fresh node started (wall time; None: node 0's agent, the store's host, ended first)."""

    def node0_ended() -> bool:
        return lab.agents.poll()[0] is not None

    if alone_first:
        lab.wait_for(
            lambda: (
                any(e["world_size"] == 1 for e in _starts(lab.events(), 0, killed_at))
                or node0_ended()
            ),
            "the survivor to train alone",
        )
    if node0_ended():
        return None
    replaced_at = time.time()
    lab.agents.start_node(1)
    lab.run.progress("a fresh node 1 joins the rendezvous")
    lab.wait_for(
        lambda: _rejoined(lab.events(), replaced_at) or node0_ended(),
        "both nodes to train at world size 2",
    )
    lab.stop_after(STOP_MARGIN)
    return replaced_at


def real_plan(p: dict[str, Any]) -> RealPlan:
    """The agents' settings and the workers' spec (also for one node on a real machine)."""
    replacing = bool(p["replacement"])
    agent = AgentSpec(
        WORKER,
        min_nodes=p["min_nodes"] if p["min_nodes"] < NODES else None,
        max_restarts=p["max_restarts"],
        join_timeout_s=p["join_timeout_s"],
        # a joining node drops a live node whose heartbeat looks older than 1 s x 2 on a loaded
        # machine (restart-accounting saw it): 5 s with a replacement, so the dead node 1 also
        # leaves the survivor's round 5 s after the kill
        keep_alive_max_attempt=5 if replacing else 2,
    )
    worker = {
        "steps": REPLACEMENT_STEP_BOUND if replacing else p["steps"],
        "checkpoint_every": p["checkpoint_every"],
        "resume": p["resume"],
        "batch_policy": p["batch_policy"],
    }
    by_hand = f"kill -9 node 1's torchrun process group after step {p['kill_after_step']}"
    if replacing:
        by_hand += (
            "; then start node 1's command on a fresh host, and end the job with "
            f"`echo STEP > {STOP_FILE}` in the shared folder"
        )
    return RealPlan(agent, worker, by_hand)


def drive(run: LabContext) -> None:
    p = run.params
    if p["kill_after_step"] >= p["steps"] - 1:
        raise LabError(f"kill_after_step {p['kill_after_step']} must be below steps - 1")
    run.plan(1)
    replacing = bool(p["replacement"])
    plan = real_plan(p)
    agent, worker = plan.agent, plan.worker
    kill = p["kill_after_step"]
    replaced_at: float | None = None  # wall time the fresh node 1 started
    with cluster_lab(run, agent, worker, loopback=p["loopback"]) as lab:
        lab.wait_for(
            lambda: min(last_step(lab.events(), node) for node in range(NODES)) >= kill,
            f"both nodes to pass step {kill}",
        )
        killed_after = last_step(lab.events(), 1)
        killed_at = time.time()
        killed_mono = lab.agents.kill_node(1)
        run.progress(f"killed node 1's agent and worker after its step {killed_after}")
        if replacing:
            replaced_at = _replace(lab, killed_at, alone_first=p["min_nodes"] < NODES)
        lab.wait_agents()
        codes = lab.agents.poll()
        ended_s = lab.agents.ended_at.get(0)
        log0 = lab.agents.log_text(0)
        events = lab.events()
        duration = time.monotonic() - lab.agents.started
    final_steps = [e["step"] for e in events if e["event"] == "finished" and e["node"] == 0]
    target = final_steps[-1] if replacing and final_steps else p["steps"]
    end = agent_end(codes.get(0), log0)
    run.observe("killed_after_step", killed_after)
    run.observe("agent_end", end)
    run.observe("agent_exit.node0", codes.get(0))
    run.observe("agent_exit.node1", codes.get(1))
    run.observe("agent_end_s", round(ended_s - killed_mono, 3) if ended_s else None)
    run.observe("duration_s", round(duration, 3))
    _report_survivor(run, events, killed_after, killed_at, target, end)
    if replacing:
        _report_replacement(run, events, replaced_at, codes)
    run.progress(f"node 0's agent: {end}", advance=1)


def _report_survivor(
    run: LabContext,
    events: list[dict[str, Any]],
    killed_after: int,
    killed_at: float,
    target: int,
    end: str,
) -> None:
    """What node 0's workers did from the kill until its agent ended (its first restart)."""
    survivor = [e for e in events if e["node"] == 0]
    attempts = sorted({e["attempt"] for e in survivor if e["event"] == "start"})
    restarts = max(attempts, default=0)
    error = first_event(survivor, "collective_error", attempt=0)
    before = first_event(survivor, "start", attempt=0)
    after = first_event(survivor, "start", attempt=restarts) if restarts else None
    saved = [e["step"] for e in events if e["event"] == "saved" and e["time"] < killed_at]
    last_saved = max(saved, default=0)
    resumed = after["step"] if after else None
    after_pid = after["pid"] if after else None
    steps_after = [e for e in survivor if e["event"] == "step" and e["pid"] == after_pid]
    final_step = max((e["step"] for e in survivor if e["event"] == "step"), default=0)
    run.observe("survivor_error", error_kind(error["message"]) if error else None)
    run.observe("survivor_error_message", error["message"][:200] if error else None)
    run.observe("survivor_error_s", round(error["time"] - killed_at, 3) if error else None)
    run.observe("restarts", restarts)
    run.observe("world_size_before", before["world_size"] if before else None)
    run.observe("world_size_after", after["world_size"] if after else None)
    run.observe(
        "world_sizes", ", ".join(str(e["world_size"]) for e in survivor if e["event"] == "start")
    )
    run.observe("last_saved_step", last_saved)
    run.observe("resumed_from_step", resumed)
    run.observe("redone_steps", killed_after - resumed if resumed is not None else None)
    for key in ("global_batch", "per_rank_batch", "lr"):
        run.observe(f"{key}_before", before[key] if before else None)
        run.observe(f"{key}_after", after[key] if after else None)
    run.observe("final_step", final_step)
    gap = round(steps_after[0]["time"] - killed_at, 3) if steps_after else None
    run.observe("restart_gap_s", gap)
    run.check(
        "survivor_saw_collective_error",
        error is not None and error["time"] >= killed_at,
        f"node 0's all_reduce raised {error['message'][:120]!r} "
        f"{error['time'] - killed_at:.2f} s after the kill"
        if error
        else "node 0 reported no collective error",
    )
    run.check(
        "agent_restarted_workers",
        restarts >= 1,
        f"node 0's worker ran {restarts + 1} attempt(s); its agent ended: {end}",
    )
    run.check(
        "continued_at_smaller_world",
        after is not None
        and after["world_size"] == 1
        and final_step == target
        and end == "finished",
        f"first restarted attempt at world size {after['world_size'] if after else None}, "
        f"reached step {final_step} of {target}; node 0's agent: {end}",
    )
    run.check(
        "resumed_from_last_checkpoint",
        resumed is not None and last_saved > 0 and resumed == last_saved,
        f"the restart began at step {resumed}; the last save before the kill was step {last_saved}",
    )


def _report_replacement(
    run: LabContext,
    events: list[dict[str, Any]],
    replaced_at: float | None,
    codes: dict[int, int | None],
) -> None:
    """What the fresh node 1 and the survivor did once it joined (replaced_at None: no fresh
    node was started)."""
    since = replaced_at if replaced_at is not None else float("inf")
    fresh = first_event([e for e in events if e["time"] > since], "start", node=1)
    rejoined = [e for e in _starts(events, 0, since) if e["world_size"] == NODES]
    survivor = rejoined[0] if rejoined else None
    joined_at = fresh["time"] if fresh else None
    saved = [
        e["step"]
        for e in events
        if e["event"] == "saved" and joined_at is not None and e["time"] < joined_at
    ]
    last_saved = max(saved, default=0)
    fresh_steps = [e for e in events if e["event"] == "step" and fresh and e["pid"] == fresh["pid"]]
    run.observe("replacement_rank", fresh["rank"] if fresh else None)
    run.observe("replacement_world_size", fresh["world_size"] if fresh else None)
    run.observe("replacement_resumed_from_step", fresh["step"] if fresh else None)
    run.observe("survivor_rank_after_join", survivor["rank"] if survivor else None)
    run.observe("survivor_resumed_after_join", survivor["step"] if survivor else None)
    run.observe("last_saved_before_join", last_saved)
    for name, event in (("replacement", fresh), ("survivor", survivor)):
        behind = last_saved - event["step"] if event else None
        run.observe(f"{name}_behind_last_save", behind)
    run.observe(
        "replacement_join_s",
        round(fresh_steps[0]["time"] - since, 3) if fresh_steps else None,
    )
    ranks = {fresh["rank"] if fresh else None, survivor["rank"] if survivor else None}
    run.check(
        "replacement_scaled_back",
        fresh is not None
        and survivor is not None
        and fresh["world_size"] == survivor["world_size"] == NODES
        and ranks == set(range(NODES))
        and fresh["step"] == survivor["step"] == last_saved > 0
        and codes.get(0) == codes.get(1) == 0,
        f"the fresh node 1's worker: rank {fresh['rank'] if fresh else None} at world size "
        f"{fresh['world_size'] if fresh else None} from step {fresh['step'] if fresh else None}; "
        f"node 0's: rank {survivor['rank'] if survivor else None} from step "
        f"{survivor['step'] if survivor else None}; last save before the join: step "
        f"{last_saved}; agents exited {codes.get(0)} and {codes.get(1)}",
    )

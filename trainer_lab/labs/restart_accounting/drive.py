"""restart-accounting lab: the driver (torch-free). Starts node 0's agent alone, then node 1's
(a join); kills one of node 1's workers (a failure); kills node 1's agent tree (a leave). After
each event it waits until the restarted workers trained two steps (or every agent ended), then
reads the restart count the workers saw and what the agents logged."""

from __future__ import annotations

import os
import re
import signal
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
)
from trainer_lab.context import LabContext

_MEMBERSHIP = re.compile(r"Detected \d+ new nodes")
_FAILURE = re.compile(r"attempts left;\s*will restart worker group")
STEPS_AFTER = 2  # steps the restarted workers train before the next event


def _starts(events: list[dict[str, Any]], node: int, since: float) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "start" and e["node"] == node and e["time"] > since]


def _trained(events: list[dict[str, Any]], node: int, since: float, steps: int) -> bool:
    """Node `node`'s workers started after `since` and trained `steps` steps since that start."""
    starts = _starts(events, node, since)
    if not starts:
        return False
    first = starts[-1]
    done = [e for e in events if e["event"] == "step" and e["pid"] == first["pid"]]
    return len(done) >= steps


def _settle(lab: ClusterLab, nodes: tuple[int, ...], since: float, what: str) -> bool:
    """Wait until every node in `nodes` restarted and trained, or every agent ended; True when
    they trained."""

    def trained() -> bool:
        events = lab.events()
        return all(_trained(events, node, since, STEPS_AFTER) for node in nodes)

    def ended() -> bool:
        return all(code is not None for code in lab.agents.poll().values())

    lab.wait_for(lambda: trained() or ended(), what)
    return trained()


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(3)
    agent = AgentSpec(
        WORKER,
        min_nodes=p["min_nodes"] if p["min_nodes"] < NODES else None,
        max_restarts=p["max_restarts"],
        join_timeout_s=p["join_timeout_s"],
        # a joining node drops a live node whose heartbeat looks older than this on a loaded
        # machine (seen at 1 s x 2): 5 s here, so node 1 leaving costs node 0 that long
        keep_alive_max_attempt=5,
    )
    worker = {"steps": p["steps"], "checkpoint_every": 2, "step_sleep_s": 0.1}
    at: dict[str, float] = {}
    with cluster_lab(
        run, agent, worker, p["loopback"], start_nodes={0}, agent_env={"LOGLEVEL": "INFO"}
    ) as lab:
        at["start"] = 0.0
        if p["min_nodes"] < NODES:
            lab.wait_for(lambda: _trained(lab.events(), 0, 0.0, STEPS_AFTER), "node 0 to train")
        else:
            lab.wait_for(lambda: "Rendezvous'ing" in lab.agents.log_text(0), "node 0's rendezvous")
        phases = ["join"]
        at["join"] = time.time()
        lab.agents.start_node(1)
        run.progress("node 1 joins", advance=1)
        if _settle(lab, (0, 1), at["join"], "both nodes to train after the join"):
            phases.append("failure")
            victim = _starts(lab.events(), 1, at["join"])[-1]["pid"]
            at["failure"] = time.time()
            os.kill(victim, signal.SIGKILL)
            run.progress(f"killed node 1's worker {victim}", advance=1)
            if _settle(lab, (0, 1), at["failure"], "both nodes to train after the failure"):
                phases.append("leave")
                at["leave"] = time.time()
                lab.agents.kill_node(1)
                run.progress("killed node 1's agent and worker", advance=1)
                _settle(lab, (0,), at["leave"], "node 0 to train after node 1 left")
        (lab.out / STOP_FILE).touch()  # every event ran: let the job finish
        lab.wait_agents()
        codes = lab.agents.poll()
        logs = {node: lab.agents.log_text(node) for node in range(NODES)}
        events = lab.events()
        duration = time.monotonic() - lab.agents.started
    _report(run, phases, at, events, codes, logs, duration)


def _report(
    run: LabContext,
    phases: list[str],
    at: dict[str, float],
    events: list[dict[str, Any]],
    codes: dict[int, int | None],
    logs: dict[int, str],
    duration: float,
) -> None:
    run.observe("phases", ", ".join(phases))
    counts: dict[str, dict[int, int]] = {}
    order = ["start", *phases]
    for index, phase in enumerate(order):
        until = at[order[index + 1]] if index + 1 < len(order) else float("inf")
        counts[phase] = {}
        for node in range(NODES):
            starts = [e for e in _starts(events, node, at[phase]) if e["time"] < until]
            counts[phase][node] = starts[0]["attempt"] if starts else -1
            run.observe(f"restart_count.{phase}.node{node}", counts[phase][node])
        starts0 = [e for e in _starts(events, 0, at[phase]) if e["time"] < until]
        if phase != "start":
            run.observe(f"world_size.{phase}", starts0[0]["world_size"] if starts0 else None)
    for node in range(NODES):
        run.observe(
            f"agent_logged.node{node}.membership_restarts", len(_MEMBERSHIP.findall(logs[node]))
        )
        run.observe(f"agent_logged.node{node}.failure_restarts", len(_FAILURE.findall(logs[node])))
        run.observe(f"agent_end.node{node}", agent_end(codes.get(node), logs[node]))
    steps0 = [e["step"] for e in events if e["event"] == "step" and e["node"] == 0]
    final_step = max(steps0, default=0)
    run.observe("final_step", final_step)
    run.observe("duration_s", round(duration, 3))
    before_join = counts["start"][0]
    join = counts["join"][0]
    join_world = _world(events, 0, at["join"])
    run.check(
        "join_not_counted",
        before_join == 0 and join == before_join and join_world == 2,
        f"node 0's workers before the join: restart count {before_join} (-1: none started); "
        f"after it: {join} at world size {join_world}",
    )
    failure = counts.get("failure", {}).get(1, -1)
    run.check(
        "failure_counted",
        "failure" in counts and failure == join + 1,
        f"after node 1's worker was killed its workers restarted with count {failure} "
        f"(-1: not at all; before: {join})"
        if "failure" in counts
        else "the job ended before a worker could be killed",
    )
    leave = counts.get("leave", {}).get(0, -1)
    after_failure = counts.get("failure", {}).get(0, -1)
    leave_world = _world(events, 0, at["leave"]) if "leave" in at else None
    end0 = agent_end(codes.get(0), logs[0])
    run.check(
        "leave_counted",
        "leave" in counts
        and leave == after_failure + 1
        and leave_world == 1
        and end0 == "finished",
        f"after node 1 left node 0's workers restarted with count {leave} (-1: not at all; "
        f"before: {after_failure}) at world size {leave_world}; node 0's agent: {end0}"
        if "leave" in counts
        else f"the job ended before node 1 could leave; node 0's agent: {end0}",
    )


def _world(events: list[dict[str, Any]], node: int, since: float) -> int | None:
    starts = _starts(events, node, since)
    return starts[0]["world_size"] if starts else None

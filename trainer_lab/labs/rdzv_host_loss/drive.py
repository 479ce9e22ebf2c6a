"""rdzv-host-loss lab: the driver (torch-free). Kills the store host's agent tree (node 0) once
both ranks passed kill_after_step, then times how node 1's agent ends."""

from __future__ import annotations

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
    last_error_line,
    last_step,
)
from trainer_lab.cluster.real_nodes import RealPlan
from trainer_lab.context import LabContext, LabError


def real_plan(p: dict[str, Any]) -> RealPlan:
    """The agents' settings and the workers' spec (also for one node on a real machine)."""
    agent = AgentSpec(
        WORKER, min_nodes=1, max_restarts=p["max_restarts"], join_timeout_s=p["join_timeout_s"]
    )
    by_hand = (
        f"kill -9 node {p['kill_node']}'s torchrun process group after step {p['kill_after_step']}"
    )
    return RealPlan(agent, {"steps": p["steps"]}, by_hand)


def drive(run: LabContext) -> None:
    p = run.params
    if p["kill_after_step"] >= p["steps"] - 1:
        raise LabError(f"kill_after_step {p['kill_after_step']} must be below steps - 1")
    run.plan(1)
    victim = p["kill_node"]
    survivor = 1 - victim
    plan = real_plan(p)
    kill = p["kill_after_step"]
    with cluster_lab(run, plan.agent, plan.worker, loopback=p["loopback"]) as lab:
        lab.wait_for(
            lambda: min(last_step(lab.events(), node) for node in range(NODES)) >= kill,
            f"both nodes to pass step {kill}",
        )
        killed_after = last_step(lab.events(), victim)
        killed_at = time.time()
        killed_mono = lab.agents.kill_node(victim)
        run.progress(f"killed node {victim}'s agent and worker after its step {killed_after}")
        lab.wait_agents()
        code = lab.agents.poll()[survivor]
        ended = lab.agents.ended_at.get(survivor)
        log = lab.agents.log_text(survivor)
        events = [e for e in lab.events() if e["group_rank"] == survivor]
        duration = time.monotonic() - lab.agents.started
    error = first_event(events, "collective_error", attempt=0)
    restarts = max((e["attempt"] for e in events if e["event"] == "start"), default=0)
    final_step = max((e["step"] for e in events if e["event"] == "step"), default=0)
    end = agent_end(code, log)
    said = last_error_line(log)
    fail_s = round(ended - killed_mono, 3) if ended is not None else None
    run.observe("killed_after_step", killed_after)
    run.observe("survivor_error", error_kind(error["message"]) if error else None)
    run.observe("survivor_error_s", round(error["time"] - killed_at, 3) if error else None)
    run.observe("survivor_restarts", restarts)
    run.observe("survivor_final_step", final_step)
    run.observe("survivor_agent_end", end)
    run.observe("survivor_agent_exit", code)
    run.observe("survivor_agent_error", said)
    run.observe("time_to_fail_s", fail_s)
    run.observe("duration_s", round(duration, 3))
    run.progress(f"node {survivor}'s agent: {end} ({said})", advance=1)
    # a race on a loaded machine: the survivor's agent can find the store gone (its monitor
    # loop asks the store) and end its worker before the worker's all_reduce raises; the
    # worker then never steps past the kill either
    raced = error is None and end == "rendezvous_error" and final_step <= killed_after
    run.check(
        "survivor_saw_collective_error",
        (error is not None and error["time"] >= killed_at) or raced,
        f"node {survivor}'s all_reduce raised {error['message'][:120]!r}"
        if error
        else (
            f"node {survivor}'s agent lost the store and ended its worker at step {final_step} "
            "before its all_reduce raised (the worker made no step past the kill)"
            if raced
            else f"node {survivor} reported no collective error"
        ),
    )
    run.check(
        "job_ended",
        code not in (None, 0) and restarts == 0 and final_step < p["steps"],
        f"node {survivor}'s agent exit code {code} after {fail_s} s; its worker restarted "
        f"{restarts} time(s) and reached step {final_step} of {p['steps']}",
    )
    run.check(
        "store_loss_named",
        end in ("rendezvous_error", "rendezvous_timeout"),
        f"node {survivor}'s agent ended {end}: {said or 'no exception in its log'}",
    )

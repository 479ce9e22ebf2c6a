"""node-loss lab: the driver (torch-free). Starts two nodes' agents, kills node 1's tree once
both ranks passed kill_after_step, then reads what the survivor and its agent did."""

from __future__ import annotations

import time

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
from trainer_lab.context import LabContext, LabError


def drive(run: LabContext) -> None:
    p = run.params
    if p["kill_after_step"] >= p["steps"] - 1:
        raise LabError(f"kill_after_step {p['kill_after_step']} must be below steps - 1")
    run.plan(1)
    agent = AgentSpec(
        WORKER,
        min_nodes=p["min_nodes"] if p["min_nodes"] < NODES else None,
        max_restarts=p["max_restarts"],
        join_timeout_s=p["join_timeout_s"],
    )
    worker = {
        "steps": p["steps"],
        "checkpoint_every": p["checkpoint_every"],
        "resume": p["resume"],
        "batch_policy": p["batch_policy"],
    }
    kill = p["kill_after_step"]
    with cluster_lab(run, agent, worker, loopback=p["loopback"]) as lab:
        lab.wait_for(
            lambda: min(last_step(lab.events(), node) for node in range(NODES)) >= kill,
            f"both nodes to pass step {kill}",
        )
        killed_after = last_step(lab.events(), 1)
        killed_at = time.time()
        killed_mono = lab.agents.kill_node(1)
        run.progress(f"killed node 1's agent and worker after its step {killed_after}")
        lab.wait_agents()
        codes = lab.agents.poll()
        ended_s = lab.agents.ended_at.get(0)
        log0 = lab.agents.log_text(0)
        events = lab.events()
        duration = time.monotonic() - lab.agents.started
    survivor = [e for e in events if e["group_rank"] == 0]
    attempts = sorted({e["attempt"] for e in survivor if e["event"] == "start"})
    restarts = max(attempts, default=0)
    error = first_event(survivor, "collective_error", attempt=0)
    before = first_event(survivor, "start", attempt=0)
    after = first_event(survivor, "start", attempt=restarts) if restarts else None
    saved = [e["step"] for e in survivor if e["event"] == "saved" and e["attempt"] == 0]
    last_saved = max(saved, default=0)
    resumed = after["step"] if after else None
    steps_after = [e for e in survivor if e["event"] == "step" and e["attempt"] == restarts]
    final_step = max((e["step"] for e in survivor if e["event"] == "step"), default=0)
    end = agent_end(codes.get(0), log0)
    run.observe("killed_after_step", killed_after)
    run.observe("survivor_error", error_kind(error["message"]) if error else None)
    run.observe("survivor_error_message", error["message"][:200] if error else None)
    run.observe("survivor_error_s", round(error["time"] - killed_at, 3) if error else None)
    run.observe("restarts", restarts)
    run.observe("agent_end", end)
    run.observe("agent_exit.node0", codes.get(0))
    run.observe("agent_exit.node1", codes.get(1))
    run.observe("world_size_before", before["world_size"] if before else None)
    run.observe("world_size_after", after["world_size"] if after else None)
    run.observe("last_saved_step", last_saved)
    run.observe("resumed_from_step", resumed)
    run.observe("redone_steps", killed_after - resumed if resumed is not None else None)
    for key in ("global_batch", "per_rank_batch", "lr"):
        run.observe(f"{key}_before", before[key] if before else None)
        run.observe(f"{key}_after", after[key] if after else None)
    run.observe("final_step", final_step)
    gap = round(steps_after[0]["time"] - killed_at, 3) if restarts and steps_after else None
    run.observe("restart_gap_s", gap)
    run.observe("agent_end_s", round(ended_s - killed_mono, 3) if ended_s else None)
    run.observe("duration_s", round(duration, 3))
    run.progress(f"node 0's agent: {end}", advance=1)
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
        and final_step == p["steps"]
        and end == "finished",
        f"last attempt at world size {after['world_size'] if after else None}, reached step "
        f"{final_step} of {p['steps']}; node 0's agent: {end}",
    )
    run.check(
        "resumed_from_last_checkpoint",
        resumed is not None and last_saved > 0 and resumed == last_saved,
        f"the restart began at step {resumed}; the last save before the kill was step {last_saved}",
    )

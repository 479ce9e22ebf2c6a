"""per-node-state lab: the driver (torch-free). Starts two nodes' agents (world size / 2
processes each, each node its own local folder), kills node 1's tree once every rank passed
kill_after_step, starts a fresh node 1 (an empty local folder) and reads where the ranks
resumed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from trainer_lab.cluster.agents import AgentSpec
from trainer_lab.cluster.lab_run import NODES, cluster_lab
from trainer_lab.context import LabContext, LabError

WORKER = Path(__file__).with_name("worker.py")
STORES = ("node_local", "shared")


def _node_env(folder: Path) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    return {"NODE_LOCAL_DIR": str(folder)}


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _after(events: list[dict[str, Any]], kind: str, since: float) -> dict[int, dict[str, Any]]:
    """The first event of a kind per global rank written after `since` (wall time)."""
    found: dict[int, dict[str, Any]] = {}
    for event in events:
        if event["event"] == kind and event["time"] > since:
            found.setdefault(event["rank"], event)
    return found


def drive(run: LabContext) -> None:
    p = run.params
    if run.world_size % NODES:
        raise LabError(f"world size {run.world_size} does not split over {NODES} nodes")
    if p["kill_after_step"] >= p["steps"] - 1:
        raise LabError(f"kill_after_step {p['kill_after_step']} must be below steps - 1")
    if p["checkpoint_every"] > p["kill_after_step"]:
        raise LabError("checkpoint_every must be at most kill_after_step (a save before the kill)")
    run.plan(2)
    nproc = run.world_size // NODES
    world = run.world_size
    agent = AgentSpec(
        WORKER, max_restarts=1, nproc_per_node=nproc, join_timeout_s=p["join_timeout_s"]
    )
    worker = {
        "steps": p["steps"],
        "checkpoint_every": p["checkpoint_every"],
        "checkpoint": p["checkpoint"],
        "step_sleep_s": 0.1,
    }
    local = run.run_dir() / "node-local"
    node_env = {node: _node_env(local / f"node{node}") for node in range(NODES)}
    kill = p["kill_after_step"]
    with cluster_lab(run, agent, worker, loopback=p["loopback"], node_env=node_env) as lab:
        run.observe("nproc_per_node", nproc)

        def steps_by_rank() -> dict[int, int]:
            found: dict[int, int] = {}
            for e in lab.events():
                if e["event"] == "step":
                    found[e["rank"]] = max(found.get(e["rank"], 0), e["step"])
            return found

        lab.wait_for(
            lambda: len(steps_by_rank()) == world and min(steps_by_rank().values()) >= kill,
            f"every rank to pass step {kill}",
        )
        before = lab.events()
        log_lines = {g: _lines(lab.out / f"log-{g}.txt") for g in ("local_rank", "rank")}
        killed_after = max(e["step"] for e in before if e["event"] == "step" and e["node"] == 1)
        killed_at = time.time()
        lab.agents.kill_node(1)
        fresh = _node_env(local / "node1-replacement")
        lab.agents.start_node(1, fresh)
        run.progress(f"node 1 killed after step {killed_after} and replaced by a fresh node", 1)

        def resumed_and_ended() -> bool:
            events = lab.events()
            ends = {
                **_after(events, "finished", killed_at),
                **_after(events, "mismatch", killed_at),
            }
            return len(ends) == world

        lab.wait_for(resumed_and_ended, "every rank to resume and finish or stop")
        lab.agents.wait(time.monotonic() - lab.agents.started + 3.0)
        events = lab.events()
        duration = time.monotonic() - lab.agents.started
    _report(run, before, events, log_lines, killed_after, killed_at, duration)


def _report(
    run: LabContext,
    before: list[dict[str, Any]],
    events: list[dict[str, Any]],
    log_lines: dict[str, int],
    killed_after: int,
    killed_at: float,
    duration: float,
) -> None:
    p = run.params
    world = run.world_size
    for rank, event in sorted(_after(before, "env", 0.0).items()):
        for key in ("local_rank", "group_rank", "node"):
            run.observe(f"env.rank{rank}.{key}", event[key])
    script_lines = log_lines["rank" if p["log_guard"] == "RANK" else "local_rank"]
    run.observe("log_lines.local_rank", log_lines["local_rank"])
    run.observe("log_lines.rank", log_lines["rank"])
    run.observe("log_lines.script", script_lines)
    for store in STORES:
        writers = {e["rank"] for e in before if e["event"] == "saved" and e["store"] == store}
        run.observe(f"saved_before_kill.{store}", len(writers))
    saved = [e["step"] for e in before if e["event"] == "saved" and e["store"] == p["checkpoint"]]
    last_saved = max(saved, default=0)
    run.observe("killed_after_step", killed_after)
    run.observe("last_saved_step", last_saved)
    resumes = _after(events, "resume", killed_at)
    for store in STORES:
        found = {rank: e["found"][store] for rank, e in resumes.items()}
        for rank, step in sorted(found.items()):
            run.observe(f"resumed.{store}.rank{rank}", -1 if step is None else step)
        run.observe(f"ranks_without_checkpoint.{store}", sum(s is None for s in found.values()))
        run.observe(f"steps_agree.{store}", len(set(found.values())) == 1)
    mismatched = _after(events, "mismatch", killed_at)
    finished = _after(events, "finished", killed_at)
    outcome = "mismatch" if mismatched else "finished" if len(finished) == world else "other"
    final_step = max((e["step"] for e in finished.values()), default=0)
    run.observe("resumed_world_size", len(resumes))
    run.observe("after_replacement", outcome)
    run.observe("final_step", final_step)
    run.observe("duration_s", round(duration, 3))
    run.progress(f"after the replacement: {outcome}", advance=1)
    run.check(
        "rank_zero_logs_once",
        script_lines == 1,
        f"the {p['log_guard']} == 0 guard logged {script_lines} line(s) across {NODES} nodes "
        f"(LOCAL_RANK guard: {log_lines['local_rank']}, RANK guard: {log_lines['rank']})",
    )
    trusted = sorted({e["step"] for e in resumes.values()})
    run.check(
        "resume_consistent",
        len(resumes) == world
        and trusted == [last_saved]
        and last_saved > 0
        and outcome == "finished"
        and final_step == p["steps"],
        f"from the {p['checkpoint']} store {len(resumes)} rank(s) resumed at step(s) {trusted} "
        f"(last save {last_saved}); the job after the replacement: {outcome}",
    )

"""What the cluster labs share (torch-free): bring up the cluster, start one agent per node on
train_worker.py, wait for what the workers report, read their events, name their errors."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.cluster.agents import AgentGroup, AgentSpec
from trainer_lab.cluster.network import Cluster, ClusterError, emulated_cluster
from trainer_lab.context import LabCancelled, LabContext, LabError, LabTimeout

WORKER = Path(__file__).with_name("train_worker.py")
NODES = 2
STOP_FILE = "stop"  # created in the workers' folder, it ends train_worker.py's loop (finished)

# The worker's spec, before a lab's own values: 2 nodes x 1 process, a global batch of 8.
BASE_SPEC: dict[str, Any] = {
    "steps": 30,
    "step_sleep_s": 0.15,
    "pg_timeout_s": 30.0,
    "checkpoint_every": 2,
    "resume": True,
    "batch_policy": "keep_global",
    "global_batch": 8,
    "base_world_size": NODES,
    "lr": 0.05,
}

_PEER_GONE = re.compile(r"closed by peer|reset by peer|connection refused|broken pipe", re.I)
_TIMEOUT = re.compile(r"timed? ?out|timeout", re.I)


def error_kind(message: str) -> str:
    """peer_gone (the other end closed or reset the connection), timeout, or other."""
    if _PEER_GONE.search(message):
        return "peer_gone"
    if _TIMEOUT.search(message):
        return "timeout"
    return "other"


def agent_end(code: int | None, log: str) -> str:
    """How an agent ended, read from its exit code and its log: finished, rendezvous_timeout,
    rendezvous_error (the store could not be reached), worker_failed, running, other."""
    if code == 0:
        return "finished"
    if "RendezvousTimeoutError" in log:
        return "rendezvous_timeout"
    if "RendezvousConnectionError" in log or "RendezvousError" in log:
        return "rendezvous_error"
    if "ChildFailedError" in log:
        return "worker_failed"
    return "running" if code is None else "other"


def last_error_line(log: str) -> str:
    """The last line of an agent's log that names an exception (`Name: message` or `Name`)."""
    pattern = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception))\b:?\s*(.*)$")
    found = ""
    for line in log.splitlines():
        match = pattern.match(line.strip())
        if match:
            found = f"{match.group(1)}: {match.group(2)}".rstrip(": ")
    return found[:200]


def first_event(events: list[dict[str, Any]], kind: str, **match: Any) -> dict[str, Any] | None:
    for event in events:
        if event["event"] == kind and all(event.get(k) == v for k, v in match.items()):
            return event
    return None


def read_events(out: Path) -> list[dict[str, Any]]:
    """Every event every worker process wrote, oldest first (torn last lines skipped)."""
    found: list[dict[str, Any]] = []
    for path in out.glob("events-*.jsonl"):
        with contextlib.suppress(OSError):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                with contextlib.suppress(json.JSONDecodeError):
                    found.append(json.loads(line))
    return sorted(found, key=lambda e: e["time"])


def last_step(events: list[dict[str, Any]], group_rank: int, attempt: int = 0) -> int:
    steps = [
        e["step"]
        for e in events
        if e["event"] == "step" and e["group_rank"] == group_rank and e["attempt"] == attempt
    ]
    return max(steps, default=0)


@dataclass
class ClusterLab:
    """A running cluster lab: the cluster, its agents, where the workers write."""

    run: LabContext
    cluster: Cluster
    agents: AgentGroup
    out: Path

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.out)

    def wait_for(self, condition: Callable[[], bool], what: str) -> None:
        """Poll condition until true; LabTimeout at the lab's deadline, LabCancelled on cancel,
        LabError when every agent ended first."""
        while not condition():
            if self.run.cancel is not None and self.run.cancel.is_set():
                raise LabCancelled(f"cancelled while waiting for {what}")
            if self.run.remaining_s() <= 0:
                raise LabTimeout(f"deadline passed while waiting for {what}")
            if all(code is not None for code in self.agents.poll().values()):
                if condition():
                    return
                logs = " | ".join(self.agents.log_text(0).strip().splitlines()[-2:])
                raise LabError(f"every agent ended before {what}: {logs}")
            time.sleep(0.05)

    def wait_agents(self) -> bool:
        """Wait for every agent to end within the lab's deadline; True when all ended."""
        deadline = self.run.remaining_s() + (time.monotonic() - self.agents.started)
        return self.agents.wait(max(0.0, deadline - 1.0))

    def stop_after(self, margin: int) -> int:
        """End the job `margin` steps past the newest step any worker reported (the ranks run in
        lockstep within a step, so each reads the file before reaching that step); return it."""
        steps = [e["step"] for e in self.events() if e["event"] == "step"]
        target = max(steps, default=0) + margin
        partial = self.out / (STOP_FILE + ".part")
        partial.write_text(str(target))
        partial.replace(self.out / STOP_FILE)
        return target

    def observe_mode(self) -> None:
        self.run.observe("mode", self.cluster.mode)
        self.run.observe("mode_note", self.cluster.note)


@contextlib.contextmanager
def cluster_lab(
    run: LabContext,
    spec: AgentSpec,
    worker: dict[str, Any],
    loopback: bool = False,
    node_env: dict[int, dict[str, str]] | None = None,
    start_nodes: set[int] | None = None,
    agent_env: dict[str, str] | None = None,
) -> Iterator[ClusterLab]:
    """Bring up NODES nodes, start the agents (spec.script: WORKER) with BASE_SPEC | worker as
    the workers' spec (agent_env: extra environment for every agent, node_env: per node index;
    start_nodes: the nodes whose agents start now, the others with agents.start_node); kill
    every agent tree and tear the cluster down however the block ends."""
    out = run.run_dir() / "workers"
    out.mkdir(parents=True, exist_ok=True)
    spec_path = run.run_dir() / "worker-spec.json"
    stop = str(out / STOP_FILE)
    spec_path.write_text(json.dumps({**BASE_SPEC, **worker, "out": str(out), "stop_file": stop}))
    env = {"CLUSTER_SPEC": str(spec_path), "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}
    env.update(agent_env or {})
    run.backend = "gloo"  # train_worker.py's process group (result.json's env.backend)
    try:
        with emulated_cluster(NODES, force_loopback=loopback) as cluster:
            run.progress(f"{NODES} nodes up ({cluster.mode}); starting one agent per node")
            with AgentGroup(cluster, spec, run.run_dir(), env, node_env, start_nodes) as agents:
                lab = ClusterLab(run, cluster, agents, out)
                lab.observe_mode()
                yield lab
    except ClusterError as error:
        raise LabError(str(error)) from None

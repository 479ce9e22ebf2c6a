"""One node of a cluster lab on a real machine (torch-free): the torchrun command each node runs,
with the same worker, spec and agent settings the emulated lab uses.

A lab offers this by a `real_plan(params)` function in its driver module (the one its drive()
builds its agents from). The lab's fault (killing a node, cutting a link) is done by hand on a
real cluster; `by_hand` says what to do. Node 0 hosts the c10d store (`is_host=true`), so the
endpoint must be node 0's address.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.catalogue_types import LabSpec, ParamError
from trainer_lab.cluster.agents import AgentSpec
from trainer_lab.cluster.lab_run import BASE_SPEC, STOP_FILE
from trainer_lab.cluster.nodes import lab_nodes
from trainer_lab.procs import kill_tree, reap

SPEC_NAME = "worker-spec.json"
_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$|^\[[0-9A-Fa-f:.]+\]$")


@dataclass(frozen=True)
class RealPlan:
    """What each node's agent runs for a lab: the agent settings, the worker's spec (before
    BASE_SPEC is filled in) and the lab's fault, to be done by hand."""

    agent: AgentSpec
    worker: dict[str, Any]
    by_hand: str


def parse_endpoint(text: str) -> tuple[str, int]:
    """HOST:PORT of the rendezvous (node 0's address); ParamError in one line otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not _HOST.match(host) or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ParamError(f"--rdzv-endpoint {text!r}: expected HOST:PORT (node 0's address)")
    return host, int(port)


def _planner(spec: LabSpec) -> Callable[[dict[str, Any]], RealPlan] | None:
    module_name = spec.driver.partition(":")[0]
    if lab_nodes(spec) < 2 or not module_name:
        return None
    planner: Callable[[dict[str, Any]], RealPlan] | None = getattr(
        importlib.import_module(module_name), "real_plan", None
    )
    return planner


def real_plan(spec: LabSpec, params: dict[str, Any]) -> RealPlan:
    """The lab's plan for real machines; ParamError naming the labs that have one otherwise."""
    if lab_nodes(spec) < 2:
        raise ParamError(f"lab {spec.name} runs on one node: it has no per-node commands")
    planner = _planner(spec)
    if planner is None:
        labs = ", ".join(real_labs())
        raise ParamError(f"lab {spec.name} has no real-cluster form yet (labs with one: {labs})")
    return planner(params)


def real_labs() -> list[str]:
    """The cluster labs whose driver offers real_plan."""
    from trainer_lab.catalogue import CATALOGUE

    return [name for name, spec in sorted(CATALOGUE.items()) if _planner(spec) is not None]


def check_node_rank(node_rank: int, nnodes: int) -> int:
    if not 0 <= node_rank < nnodes:
        raise ParamError(f"--node-rank {node_rank}: must be 0 to {nnodes - 1} (--nnodes {nnodes})")
    return node_rank


def worker_spec(plan: RealPlan, out: Path) -> dict[str, Any]:
    """The worker's spec on a real cluster: `out` must be a folder every node shares (the
    checkpoint; the stop file)."""
    return {**BASE_SPEC, **plan.worker, "out": str(out), "stop_file": str(out / STOP_FILE)}


def node_argv(
    plan: RealPlan,
    lab: str,
    nnodes: int,
    node_rank: int,
    endpoint: str,
    python: str = sys.executable,
) -> list[str]:
    """The torchrun command node `node_rank` runs (node 0 hosts the store)."""
    agent = plan.agent
    span = f"{agent.min_nodes}:{nnodes}" if agent.min_nodes is not None else str(nnodes)
    conf = [
        f"join_timeout={agent.join_timeout_s}",
        f"last_call_timeout={agent.last_call_timeout_s}",
        f"keep_alive_interval={agent.keep_alive_interval_s}",
        f"keep_alive_max_attempt={agent.keep_alive_max_attempt}",
        f"is_host={'true' if node_rank == 0 else 'false'}",
    ]
    return [
        python, "-m", "torch.distributed.run",
        "--nnodes", span, "--node-rank", str(node_rank),
        "--nproc-per-node", str(agent.nproc_per_node),
        "--max-restarts", str(agent.max_restarts),
        "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint, "--rdzv-id", f"drill-{lab}",
        "--rdzv-conf", ",".join(conf),
        *script_args(agent.script), *agent.args,
    ]  # fmt: skip


def script_args(script: Path) -> list[str]:
    """A worker inside the trainer_lab package runs as a module (`-m trainer_lab....`), so the
    command holds on any machine where drill is installed; another script by its path."""
    package_root = Path(__file__).resolve().parents[2]
    try:
        relative = script.resolve().relative_to(package_root)
    except ValueError:
        return [str(script)]
    if relative.parts[0] != "trainer_lab" or relative.suffix != ".py":
        return [str(script)]
    return ["-m", ".".join(relative.with_suffix("").parts)]


def node_env(spec_path: Path, node_rank: int) -> dict[str, str]:
    """The environment a node's agent adds (GLOO_SOCKET_IFNAME is the user's: the NIC name)."""
    return {"CLUSTER_SPEC": str(spec_path), "DRILL_NODE": str(node_rank)}


def write_spec(plan: RealPlan, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / SPEC_NAME
    path.write_text(json.dumps(worker_spec(plan, out), indent=1))
    return path


def command_line(argv: list[str], env: dict[str, str]) -> str:
    """One shell line: VAR=value ... argv, quoted."""
    assigns = [f"{key}={shlex.quote(value)}" for key, value in env.items()]
    return " ".join([*assigns, *(shlex.quote(arg) for arg in argv)])


def print_plan_lines(
    spec: LabSpec, params: dict[str, Any], nnodes: int, endpoint: str, out: Path
) -> list[str]:
    """What --print-commands shows: the spec file to write, one command per node, the fault."""
    plan = real_plan(spec, params)
    spec_path = out / SPEC_NAME
    lines = [
        f"# {spec.name} on {nnodes} real machines; {out} must be a folder every node shares",
        f"# write {spec_path}:",
        f"mkdir -p {shlex.quote(str(out))} && cat > {shlex.quote(str(spec_path))} <<'EOF'",
        json.dumps(worker_spec(plan, out)),
        "EOF",
    ]
    for rank in range(nnodes):
        host = " (it hosts the rendezvous: the endpoint is its address)" if rank == 0 else ""
        lines.append(f"# node {rank}{host}; set GLOO_SOCKET_IFNAME to its NIC:")
        argv = node_argv(plan, spec.name, nnodes, rank, endpoint, python="python")
        lines.append(command_line(argv, node_env(spec_path, rank)))
    lines.append(f"# then, by hand: {plan.by_hand}")
    lines.append(f"# each worker writes events-<pid>.jsonl under {out}")
    return lines


def run_node(
    spec: LabSpec,
    params: dict[str, Any],
    nnodes: int,
    node_rank: int,
    endpoint: str,
    out: Path,
    on_start: Callable[[str], object] = print,
) -> int:
    """Run node `node_rank`'s torchrun agent of the lab here, in the foreground, with the
    workers' spec written under `out` (a folder every node shares); return the agent's exit
    code. Interrupted, it kills the agent's whole tree first."""

    plan = real_plan(spec, params)
    spec_path = write_spec(plan, out)
    argv = node_argv(plan, spec.name, nnodes, node_rank, endpoint)
    env = node_env(spec_path, node_rank)
    on_start(command_line(argv, env))
    on_start(f"by hand: {plan.by_hand}")
    agent = subprocess.Popen(argv, env={**os.environ, **env}, stdin=subprocess.DEVNULL)
    try:
        return agent.wait()
    finally:
        if agent.poll() is None:
            for pid in kill_tree(agent.pid):
                if pid != agent.pid:
                    reap(pid)
            agent.wait()

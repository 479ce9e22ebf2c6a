"""One torchrun agent per node of an emulated cluster, meeting at a c10d rendezvous on node 0."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from trainer_lab.cluster.network import Cluster, Node
from trainer_lab.procs import kill_tree, reap

RDZV_PORT = 29400


@dataclass
class AgentSpec:
    """What every agent runs: a script and its arguments, nnodes MIN:MAX, restarts."""

    script: Path
    args: tuple[str, ...] = ()
    min_nodes: int | None = None  # None: all nodes
    max_restarts: int = 0
    nproc_per_node: int = 1
    join_timeout_s: int = 30


def free_port(ip: str) -> int:
    """A TCP port free on ip now (loopback mode shares one namespace between all nodes)."""
    with socket.socket() as probe:
        probe.bind((ip, 0))
        return int(probe.getsockname()[1])


def rendezvous_port(cluster: Cluster) -> int:
    """Node 0's namespace is fresh in netns mode, so the usual port is free; loopback picks one."""
    return RDZV_PORT if cluster.mode == "netns" else free_port(cluster.nodes[0].ip)


def agent_argv(cluster: Cluster, node: Node, spec: AgentSpec, port: int) -> list[str]:
    nodes = len(cluster.nodes)
    nnodes = f"{spec.min_nodes}:{nodes}" if spec.min_nodes is not None else str(nodes)
    argv = [
        *node.exec_prefix(), sys.executable, "-m", "torch.distributed.run",
        "--nnodes", nnodes, "--nproc-per-node", str(spec.nproc_per_node),
        "--max-restarts", str(spec.max_restarts),
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"{cluster.nodes[0].ip}:{port}",
        "--rdzv-id", f"drill{cluster.owner}", "--local-addr", node.ip,
    ]  # fmt: skip
    conf = [f"join_timeout={spec.join_timeout_s}"]
    if node.index == 0:
        conf.append("is_host=true")  # namespaces share the hostname: say who hosts the store
    else:
        conf.append("is_host=false")
    argv += ["--rdzv-conf", ",".join(conf), str(spec.script), *spec.args]
    return argv


def agent_env(node: Node, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["GLOO_SOCKET_IFNAME"] = node.ifname
    env.pop("MASTER_ADDR", None)
    env.pop("MASTER_PORT", None)
    env.update(extra or {})
    return env


@dataclass
class AgentsOutcome:
    returncodes: dict[int, int | None]  # node index -> exit code (None: killed at the deadline)
    timed_out: bool
    elapsed_s: float
    logs: dict[int, str]


def run_agents(
    cluster: Cluster,
    spec: AgentSpec,
    log_dir: Path,
    deadline_s: float,
    env: dict[str, str] | None = None,
) -> AgentsOutcome:
    """Start one agent per node, wait for all of them until deadline_s, then kill whatever is
    left of every agent's tree (also when interrupted)."""
    port = rendezvous_port(cluster)
    started = time.monotonic()
    procs: dict[int, subprocess.Popen[bytes]] = {}
    logs: dict[int, Path] = {}
    timed_out = False
    try:
        for node in cluster.nodes:
            logs[node.index] = log_dir / f"agent{node.index}.log"
            with logs[node.index].open("wb") as sink:
                procs[node.index] = subprocess.Popen(
                    agent_argv(cluster, node, spec, port),
                    env=agent_env(node, env),
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
        while any(proc.poll() is None for proc in procs.values()):
            if time.monotonic() - started > deadline_s:
                timed_out = True
                break
            time.sleep(0.05)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                for pid in kill_tree(proc.pid):
                    if pid != proc.pid:
                        reap(pid)
            proc.wait()
    codes = {
        i: (None if timed_out and p.returncode < 0 else p.returncode) for i, p in procs.items()
    }
    texts: dict[int, str] = {}
    for index, path in logs.items():
        with contextlib.suppress(OSError):
            texts[index] = path.read_bytes()[-20_000:].decode("utf-8", "replace")
    return AgentsOutcome(codes, timed_out, time.monotonic() - started, texts)

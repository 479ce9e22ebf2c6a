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
    # once min_nodes have joined, how long the rendezvous waits for more (torch's default, 30 s,
    # would hold every elastic restart for half a minute)
    last_call_timeout_s: int = 1
    # a node whose heartbeat is older than interval x attempts is dead and leaves the
    # rendezvous (torch's default, 5 s x 3, holds a survivor's restart for 15 s)
    keep_alive_interval_s: int = 1
    keep_alive_max_attempt: int = 2


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
    conf = [
        f"join_timeout={spec.join_timeout_s}",
        f"last_call_timeout={spec.last_call_timeout_s}",
        f"keep_alive_interval={spec.keep_alive_interval_s}",
        f"keep_alive_max_attempt={spec.keep_alive_max_attempt}",
    ]
    if node.index == 0:
        conf.append("is_host=true")  # namespaces share the hostname: say who hosts the store
    else:
        conf.append("is_host=false")
    argv += ["--rdzv-conf", ",".join(conf), str(spec.script), *spec.args]
    return argv


def agent_env(node: Node, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["GLOO_SOCKET_IFNAME"] = node.ifname
    env["DRILL_NODE"] = str(node.index)  # which emulated node a worker runs on
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


class AgentGroup:
    """One running agent per node (started at construction, or only start_nodes of them: start
    the others with start_node); kill a node's whole tree, start a fresh agent in its place,
    wait for the rest, and on close kill whatever is still running (a context manager)."""

    def __init__(
        self,
        cluster: Cluster,
        spec: AgentSpec,
        log_dir: Path,
        env: dict[str, str] | None = None,
        node_env: dict[int, dict[str, str]] | None = None,
        start_nodes: set[int] | None = None,
    ) -> None:
        self.cluster, self.spec, self.log_dir = cluster, spec, log_dir
        self.env = env or {}
        self.port = rendezvous_port(cluster)
        self.started = time.monotonic()
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.logs: dict[int, Path] = {}
        self.ended_at: dict[int, float] = {}  # node index -> monotonic time its exit was seen
        self.killed: set[int] = set()
        self.replaced: dict[int, int] = {}  # node index -> how many times a fresh agent took over
        try:
            for node in cluster.nodes:
                if start_nodes is None or node.index in start_nodes:
                    self.start_node(node.index, (node_env or {}).get(node.index))
        except BaseException:
            self.close()
            raise

    def _start(self, index: int, extra: dict[str, str] | None, log_name: str) -> None:
        node = self.cluster.nodes[index]
        self.logs[index] = self.log_dir / log_name
        with self.logs[index].open("wb") as sink:
            self.procs[index] = subprocess.Popen(
                agent_argv(self.cluster, node, self.spec, self.port),
                env=agent_env(node, {**self.env, **(extra or {})}),
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def start_node(self, index: int, extra: dict[str, str] | None = None) -> None:
        """Start node `index`'s agent late (one left out at construction: a node joining) or
        afresh (its old agent killed: a replacement node); a fresh agent logs to
        agent<index>-r<n>.log."""
        if index in self.procs and self.procs[index].poll() is None:
            raise RuntimeError(f"node {index}'s agent still runs: kill it before replacing it")
        log_name = f"agent{index}.log"
        if index in self.procs:
            self.replaced[index] = self.replaced.get(index, 0) + 1
            log_name = f"agent{index}-r{self.replaced[index]}.log"
        self.ended_at.pop(index, None)
        self.killed.discard(index)
        self._start(index, extra, log_name)

    def poll(self) -> dict[int, int | None]:
        """Each agent's exit code, None while it runs; records when an exit was first seen."""
        codes: dict[int, int | None] = {}
        for index, proc in self.procs.items():
            codes[index] = proc.poll()
            if codes[index] is not None and index not in self.ended_at:
                self.ended_at[index] = time.monotonic()
        return codes

    def kill_node(self, index: int) -> float:
        """SIGKILL node `index`'s agent and every worker under it; return the monotonic time."""
        proc = self.procs[index]
        for pid in kill_tree(proc.pid):
            if pid != proc.pid:
                reap(pid)
        proc.wait()
        self.killed.add(index)
        self.poll()
        return time.monotonic()

    def wait(self, deadline_s: float) -> bool:
        """Wait until every agent has exited or deadline_s (from the start) passed; True when
        all exited."""
        while any(code is None for code in self.poll().values()):
            if time.monotonic() - self.started > deadline_s:
                return False
            time.sleep(0.05)
        return True

    def close(self) -> None:
        """Kill what still runs of every agent's tree (safe to call twice)."""
        for proc in self.procs.values():
            if proc.poll() is None:
                for pid in kill_tree(proc.pid):
                    if pid != proc.pid:
                        reap(pid)
            proc.wait()

    def log_text(self, index: int) -> str:
        with contextlib.suppress(OSError):
            return self.logs[index].read_bytes()[-20_000:].decode("utf-8", "replace")
        return ""

    def __enter__(self) -> AgentGroup:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def run_agents(
    cluster: Cluster,
    spec: AgentSpec,
    log_dir: Path,
    deadline_s: float,
    env: dict[str, str] | None = None,
) -> AgentsOutcome:
    """Start one agent per node, wait for all of them until deadline_s, then kill whatever is
    left of every agent's tree (also when interrupted)."""
    with AgentGroup(cluster, spec, log_dir, env) as group:
        done = group.wait(deadline_s)
        timed_out = not done
        group.close()
        codes = {
            i: (None if timed_out and p.returncode < 0 else p.returncode)
            for i, p in group.procs.items()
        }
        texts = {index: group.log_text(index) for index in group.logs}
        return AgentsOutcome(codes, timed_out, time.monotonic() - group.started, texts)

"""An emulated cluster of N nodes on one machine: one network namespace per node, joined by veth
pairs on a bridge, each node with its own IP; per-link shaping and partitions.

Every name carries the prefix and the owner's pid (`drl<pid>n0`, `drl<pid>h0`, `drl<pid>br`), so
leftovers of a killed run are found and removed at the next start. Where namespaces cannot be
made (not root, no CAP_NET_ADMIN) the cluster runs in loopback mode: nodes are 127.0.0.2, .3,
... in the host's namespace, without shaping or partitions, and `mode` says so.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from trainer_lab.procs import is_alive

PREFIX = "drl"
MAX_NODES = 4
SUBNET = "10.77.0"  # the bridge has no address, so clusters of different owners never clash
COMMAND_TIMEOUT_S = 10.0
_OWNED = re.compile(rf"^{PREFIX}(\d+)(n\d+|h\d+|v\d+|br)$")

Mode = Literal["netns", "loopback"]
ShapingMode = Literal["netem", "tbf", "none"]


class ClusterError(RuntimeError):
    """One line naming what could not be done (shown to the user as is)."""


@dataclass(frozen=True)
class Node:
    index: int
    ip: str
    namespace: str | None  # None in loopback mode
    ifname: str  # the node's interface (inside its namespace; "lo" in loopback mode)
    host_ifname: str | None  # the veth end on the bridge (the link the node hangs on)

    def exec_prefix(self) -> list[str]:
        """The argv prefix that runs a command on this node."""
        return ["ip", "netns", "exec", self.namespace] if self.namespace else []


@dataclass(frozen=True)
class Shaping:
    """What was applied to one node's link, and which mode applied it."""

    mode: ShapingMode
    rate_mbit: float | None
    delay_ms: float | None
    loss_pct: float | None
    skipped: tuple[str, ...] = ()  # e.g. ("delay: no netem in this kernel",)


@dataclass
class Cluster:
    owner: int
    mode: Mode
    nodes: list[Node]
    note: str = ""  # one line on why loopback mode ran, empty in netns mode
    bridge: str | None = None
    netem: bool = False
    shaped: dict[int, Shaping] = field(default_factory=dict)
    cleaned: list[str] = field(default_factory=list)  # leftovers of dead owners removed at start

    def names(self) -> list[str]:
        """Every namespace and link this cluster made."""
        found = [self.bridge] if self.bridge else []
        for node in self.nodes:
            found += [name for name in (node.namespace, node.host_ifname) if name]
        return found

    def shape(
        self,
        node: int,
        rate_mbit: float,
        delay_ms: float | None = None,
        loss_pct: float | None = None,
    ) -> Shaping:
        """Limit a node's link in both directions to rate_mbit; delay and loss only with netem
        (without it they are skipped and the result says so)."""
        target = self._link(node)
        assert target.namespace and target.host_ifname
        wants_netem = delay_ms is not None or loss_pct is not None
        skipped: list[str] = []
        if wants_netem and self.netem:
            spec = ["netem", "rate", f"{rate_mbit}mbit"]
            if delay_ms is not None:
                spec += ["delay", f"{delay_ms}ms"]
            if loss_pct is not None:
                spec += ["loss", f"{loss_pct}%"]
            mode: ShapingMode = "netem"
        else:
            if delay_ms is not None:
                skipped.append("delay: no netem in this kernel")
            if loss_pct is not None:
                skipped.append("loss: no netem in this kernel")
            burst_bytes = max(16_000, int(rate_mbit * 1e6 / 8 / 100))  # about 10 ms at rate
            spec = ["tbf", "rate", f"{rate_mbit}mbit", "burst", str(burst_bytes), "latency", "50ms"]
            mode = "tbf"
        _ip(["tc", "qdisc", "replace", "dev", target.host_ifname, "root", *spec])
        _ip(["ip", "netns", "exec", target.namespace, "tc", "qdisc", "replace", "dev",
             target.ifname, "root", *spec])  # fmt: skip
        result = Shaping(mode, rate_mbit, delay_ms if mode == "netem" else None,
                         loss_pct if mode == "netem" else None, tuple(skipped))  # fmt: skip
        self.shaped[node] = result
        return result

    def unshape(self, node: int) -> None:
        target = self._link(node)
        assert target.namespace and target.host_ifname
        _ip(["tc", "qdisc", "del", "dev", target.host_ifname, "root"], check=False)
        _ip(["ip", "netns", "exec", target.namespace, "tc", "qdisc", "del", "dev",
             target.ifname, "root"], check=False)  # fmt: skip
        self.shaped.pop(node, None)

    def partition(self, node: int) -> None:
        """Cut a node off the bridge (its link goes down)."""
        _ip(["ip", "link", "set", "dev", self._link(node).host_ifname or "", "down"])

    def heal(self, node: int) -> None:
        """Put a partitioned node back on the bridge."""
        _ip(["ip", "link", "set", "dev", self._link(node).host_ifname or "", "up"])

    def teardown(self) -> None:
        """Remove everything this cluster made; safe to call twice."""
        if self.mode == "netns":
            _remove(self.names())

    def _link(self, node: int) -> Node:
        if self.mode != "netns":
            raise ClusterError(f"loopback mode has no links to shape or cut ({self.note})")
        if not 0 <= node < len(self.nodes):
            raise ClusterError(f"no node {node} (the cluster has {len(self.nodes)})")
        return self.nodes[node]


def _ip(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run an ip/tc command with a timeout; a failure becomes one ClusterError line."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
        )
    except FileNotFoundError as exc:
        raise ClusterError(f"{argv[0]} is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(f"{' '.join(argv)} did not finish in {COMMAND_TIMEOUT_S:.0f} s") from exc
    if check and done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["exit code " + str(done.returncode)])[-1]
        raise ClusterError(f"{' '.join(argv)}: {why}")
    return done


def existing_names() -> list[str]:
    """Namespaces and links on this machine that carry the prefix."""
    found: list[str] = []
    with contextlib.suppress(ClusterError):
        for line in _ip(["ip", "netns", "list"], check=False).stdout.splitlines():
            if line.startswith(PREFIX):
                found.append(line.split()[0])
    with contextlib.suppress(ClusterError):
        for line in _ip(["ip", "-o", "link", "show"], check=False).stdout.splitlines():
            parts = line.split(":", 2)
            if len(parts) >= 2:
                name = parts[1].strip().split("@")[0]
                if name.startswith(PREFIX):
                    found.append(name)
    return found


def owner_of(name: str) -> int | None:
    match = _OWNED.match(name)
    return int(match.group(1)) if match else None


def clean_leftovers() -> list[str]:
    """Remove the namespaces and links of owners that no longer run; return their names."""
    stale = [
        name
        for name in existing_names()
        if (owner := owner_of(name)) is not None and owner != os.getpid() and not is_alive(owner)
    ]
    _remove(stale)
    return stale


def _is_namespace(name: str) -> bool:
    return re.search(r"n\d+$", name) is not None


def _remove(names: list[str]) -> None:
    """Delete namespaces first (their veth ends go with them, and the peers on the bridge with
    those), then whatever links remain."""
    if not names:
        return
    present = set(existing_names())
    for name in names:
        if _is_namespace(name) and name in present:
            _ip(["ip", "netns", "delete", name], check=False)
    present = set(existing_names())
    for name in names:
        if not _is_namespace(name) and name in present:
            _ip(["ip", "link", "delete", name], check=False)


def _netem_available(namespace: str) -> bool:
    """Try a netem qdisc on the namespace's loopback device (then remove it)."""
    inside = ["ip", "netns", "exec", namespace, "tc", "qdisc"]
    if _ip([*inside, "add", "dev", "lo", "root", "netem", "delay", "0ms"], check=False).returncode:
        return False
    _ip([*inside, "del", "dev", "lo", "root"], check=False)
    return True


def _loopback(owner: int, count: int, note: str) -> Cluster:
    nodes = [Node(i, f"127.0.0.{i + 2}", None, "lo", None) for i in range(count)]
    return Cluster(owner, "loopback", nodes, note=note)


def _why_no_namespaces() -> str:
    if os.geteuid() != 0:
        return "not root: nodes run on loopback addresses without shaping"
    return ""


def bring_up(count: int = 2, force_loopback: bool = False) -> Cluster:
    """Make a cluster of count nodes (see the module docstring); the caller tears it down."""
    if not 1 <= count <= MAX_NODES:
        raise ClusterError(f"{count} nodes asked, this machine allows 1 to {MAX_NODES}")
    owner = os.getpid()
    note = "loopback mode asked for" if force_loopback else _why_no_namespaces()
    if note:
        return _loopback(owner, count, note)
    cleaned = clean_leftovers()
    bridge = f"{PREFIX}{owner}br"
    nodes = [
        Node(
            i,
            f"{SUBNET}.{i + 2}",
            f"{PREFIX}{owner}n{i}",
            f"{PREFIX}{owner}v{i}",
            f"{PREFIX}{owner}h{i}",
        )
        for i in range(count)
    ]
    cluster = Cluster(owner, "netns", nodes, bridge=bridge, cleaned=cleaned)
    try:
        first = _ip(["ip", "link", "add", bridge, "type", "bridge", "forward_delay", "0"],
                    check=False)  # fmt: skip
        if first.returncode != 0:
            why = (first.stderr.strip().splitlines() or ["no CAP_NET_ADMIN"])[-1]
            return _loopback(owner, count, f"no network namespaces ({why}): loopback mode")
        _ip(["ip", "link", "set", bridge, "up"])
        for node in nodes:
            _bring_up_node(node, bridge)
        cluster.netem = _netem_available(nodes[0].namespace or "")
    except BaseException:
        cluster.teardown()
        raise
    return cluster


def _bring_up_node(node: Node, bridge: str) -> None:
    assert node.namespace and node.host_ifname
    ns = node.namespace
    _ip(["ip", "netns", "add", ns])
    _ip(["ip", "link", "add", node.host_ifname, "type", "veth", "peer", "name", node.ifname,
         "netns", ns])  # fmt: skip
    _ip(["ip", "link", "set", node.host_ifname, "master", bridge, "up"])
    _ip(["ip", "-n", ns, "addr", "add", f"{node.ip}/24", "dev", node.ifname])
    _ip(["ip", "-n", ns, "link", "set", node.ifname, "up"])
    _ip(["ip", "-n", ns, "link", "set", "lo", "up"])


@contextlib.contextmanager
def emulated_cluster(count: int = 2, force_loopback: bool = False) -> Iterator[Cluster]:
    """bring_up, then teardown however the block ends."""
    cluster = bring_up(count, force_loopback)
    try:
        yield cluster
    finally:
        cluster.teardown()


def wait_until(condition: Callable[[], bool], timeout_s: float, interval_s: float = 0.02) -> bool:
    """Poll a callable until it returns true or timeout_s passes; return the last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval_s)

"""Reachability between two nodes, observed with a real TCP connection (no ping needed)."""

from __future__ import annotations

import subprocess
import sys

from trainer_lab.cluster.network import Cluster, ClusterError

_LISTEN = (
    "import socket,sys\n"
    "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind((sys.argv[1], 0)); s.listen(8); print(s.getsockname()[1], flush=True)\n"
    "while True:\n"
    "    c, _ = s.accept(); c.sendall(b'ok'); c.close()\n"
)
_CONNECT = (
    "import socket,sys\n"
    "try:\n"
    "    c=socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3]))\n"
    "    sys.exit(0 if c.recv(2) == b'ok' else 1)\n"
    "except OSError:\n"
    "    sys.exit(1)\n"
)


class Listener:
    """A TCP server on one node that answers every connection with b"ok"; stop() ends it."""

    def __init__(self, cluster: Cluster, node: int) -> None:
        target = cluster.nodes[node]
        self.ip = target.ip
        self._proc = subprocess.Popen(
            [*target.exec_prefix(), sys.executable, "-c", _LISTEN, target.ip],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise ClusterError(f"no listener on node {node} ({target.ip})")
        self.port = int(line)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def connects(cluster: Cluster, node: int, listener: Listener, timeout_s: float = 1.0) -> bool:
    """True when a TCP connection from node to the listener completes within timeout_s."""
    source = cluster.nodes[node]
    argv = [*source.exec_prefix(), sys.executable, "-c", _CONNECT, listener.ip,
            str(listener.port), str(timeout_s)]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout_s + 10)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0

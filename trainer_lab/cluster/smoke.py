"""The smallest cross-node check: one gloo all_reduce over every node of an emulated cluster."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from trainer_lab.cluster.agents import AgentSpec, run_agents
from trainer_lab.cluster.network import Mode, emulated_cluster

WORKER = Path(__file__).with_name("allreduce_worker.py")


@dataclass
class SmokeResult:
    mode: Mode
    note: str
    expected: float
    sums: dict[int, float]  # rank -> the sum it saw
    group_ranks: dict[int, int]  # rank -> GROUP_RANK (the node it ran on)
    returncodes: dict[int, int | None]
    timed_out: bool
    elapsed_s: float

    @property
    def ok(self) -> bool:
        world = len(self.returncodes)
        return (
            not self.timed_out
            and all(code == 0 for code in self.returncodes.values())
            and len(self.sums) == world
            and all(value == self.expected for value in self.sums.values())
        )

    def summary(self) -> str:
        state = "ok" if self.ok else "failed"
        sums = ", ".join(f"rank {r}: {v:g}" for r, v in sorted(self.sums.items()))
        line = f"all_reduce over {len(self.returncodes)} nodes ({self.mode}) {state}: {sums}"
        return line + (f" [{self.note}]" if self.note else "")


def smoke(nodes: int = 2, deadline_s: float = 60.0, force_loopback: bool = False) -> SmokeResult:
    """Bring up a cluster, run one agent per node (1 process each), all_reduce RANK + 1."""
    with (
        emulated_cluster(nodes, force_loopback) as cluster,
        tempfile.TemporaryDirectory(prefix="drill-cluster-") as folder,
    ):
        out = Path(folder)
        outcome = run_agents(
            cluster,
            AgentSpec(WORKER, join_timeout_s=int(deadline_s)),
            out,
            deadline_s,
            env={"CLUSTER_OUT_DIR": folder},
        )
        sums: dict[int, float] = {}
        group_ranks: dict[int, int] = {}
        for path in out.glob("rank*.json"):
            record = json.loads(path.read_text())
            sums[record["rank"]] = record["sum"]
            group_ranks[record["rank"]] = record["group_rank"]
        return SmokeResult(
            cluster.mode,
            cluster.note,
            float(sum(range(1, nodes + 1))),
            sums,
            group_ranks,
            outcome.returncodes,
            outcome.timed_out,
            outcome.elapsed_s,
        )

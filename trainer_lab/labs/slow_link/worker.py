"""Run by torchrun on every node of the slow-link lab (imports torch): 2 nodes x 2 processes.

Groups: each node's processes (intra), the nodes' local leaders (cross: one process per node, so
everything it sends goes over the link between the nodes), and the pairs of processes with the
same LOCAL_RANK (for the cross_first sabotage).

1. Unshaped: time all_reduce by message size within each node and across the link; write
   `unshaped` (rank 0) and wait for the driver's go file (it shapes node 1's link first).
2. Shaped: time the cross-node all_reduce by size again; count the bytes one all_reduce of the
   largest message puts on the link; then a flat all_reduce over all four processes against a
   hierarchical one (reduce within the node, all_reduce between the leaders, broadcast within
   the node), each timed and its bytes counted on node 0's interface (tx: to node 1, rx: from
   node 1; on two nodes every cross-node byte passes it).
Rank 0 writes every measurement in one `report` event (events-<pid>.jsonl, as the other cluster
labs' workers do).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed import ProcessGroup

GO_WAIT_S = 60.0  # how long a rank waits for the driver's go file before it gives up


def link_bytes(ifname: str) -> tuple[int, int]:
    """(tx, rx) bytes of this namespace's interface (`ip netns exec` mounts its own /sys)."""
    base = Path("/sys/class/net") / ifname / "statistics"
    return int((base / "tx_bytes").read_text()), int((base / "rx_bytes").read_text())


def median_seconds(fn: Callable[[], None], group: ProcessGroup, reps: int) -> float:
    """The median of `reps` timings of fn, the slowest member of `group` (a collective ends with
    its last rank)."""
    times = []
    for _ in range(reps):
        dist.barrier(group=group)
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    mine = torch.tensor([statistics.median(times)], dtype=torch.float64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX, group=group)
    return float(mine.item())


def time_sizes(sizes: list[int], group: ProcessGroup, reps: int) -> list[float]:
    bufs = [torch.ones(size // 4) for size in sizes]
    return [
        median_seconds(lambda b=buf: dist.all_reduce(b, group=group), group, reps) for buf in bufs
    ]


class Layout:
    """Who is where: the groups every rank creates (in the same order on every rank)."""

    def __init__(self) -> None:
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        here = torch.tensor([int(os.environ["GROUP_RANK"]), int(os.environ["LOCAL_RANK"])])
        placed = [torch.zeros(2, dtype=torch.long) for _ in range(self.world)]
        dist.all_gather(placed, here)
        where = {r: (int(t[0]), int(t[1])) for r, t in enumerate(placed)}
        nodes = sorted({node for node, _ in where.values()})
        locals_ = sorted({local for _, local in where.values()})
        self.node, self.local = where[self.rank]
        self.intra: dict[int, ProcessGroup] = {}
        self.leader: dict[int, int] = {}
        for node in nodes:
            members = sorted(r for r, (n, _) in where.items() if n == node)
            self.intra[node] = dist.new_group(members)
            self.leader[node] = members[0]
        self.pairs: dict[int, ProcessGroup] = {}
        for local in locals_:
            self.pairs[local] = dist.new_group(
                sorted(r for r, (_, x) in where.items() if x == local)
            )
        self.leaders = self.pairs[0]  # LOCAL_RANK 0 of every node: one process per node
        self.is_leader = self.local == 0

    def hierarchical(self, x: torch.Tensor, sabotage: str) -> None:
        """Intra-node reduce, one cross-node all_reduce between the leaders, intra broadcast.
        cross_first: every process crosses the link first (pairs), then the node all_reduces;
        no_broadcast: the leaders keep the sum to themselves."""
        intra, leader = self.intra[self.node], self.leader[self.node]
        if sabotage == "cross_first":
            dist.all_reduce(x, group=self.pairs[self.local])
            dist.all_reduce(x, group=intra)
            return
        dist.reduce(x, dst=leader, group=intra)
        if self.is_leader:
            dist.all_reduce(x, group=self.leaders)
        if sabotage != "no_broadcast":
            dist.broadcast(x, src=leader, group=intra)


def measured(
    fn: Callable[[], None], ifname: str, reps: int, rank: int
) -> tuple[float, tuple[int, int]]:
    """fn's median time over `reps` calls (slowest rank) and the bytes (tx, rx) node 0's
    interface moved meanwhile (read by rank 0; the barriers add a few hundred bytes)."""
    world = dist.group.WORLD
    assert world is not None
    dist.barrier()
    before = link_bytes(ifname) if rank == 0 else (0, 0)
    seconds = median_seconds(fn, world, reps)
    after = link_bytes(ifname) if rank == 0 else (0, 0)
    return seconds, (after[0] - before[0], after[1] - before[1])


def wait_for_go(go: Path) -> None:
    deadline = time.monotonic() + GO_WAIT_S
    while not go.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the driver's go file {go} did not appear in {GO_WAIT_S:.0f} s")
        time.sleep(0.02)


def main() -> None:
    torch.set_num_threads(1)
    spec = json.loads(Path(os.environ["CLUSTER_SPEC"]).read_text())
    out = Path(spec["out"])
    sink = out / f"events-{os.getpid()}.jsonl"
    ifname = os.environ["GLOO_SOCKET_IFNAME"]
    sizes, reps, sabotage = [int(s) for s in spec["sizes"]], int(spec["reps"]), spec["sabotage"]

    def write(event: str, **values: Any) -> None:
        with sink.open("a", encoding="utf-8") as events:
            record = {"event": event, "time": time.time(), "rank": dist.get_rank(), **values}
            events.write(json.dumps(record) + "\n")

    dist.init_process_group("gloo", timeout=timedelta(seconds=float(spec["pg_timeout_s"])))
    lay = Layout()
    intra = lay.intra[lay.node]
    for size in sizes:  # warm-up: the first use of a size sets up gloo's buffers
        dist.all_reduce(torch.ones(size // 4), group=intra)
        if lay.is_leader:
            dist.all_reduce(torch.ones(size // 4), group=lay.leaders)
    intra_s = time_sizes(sizes, intra, reps)  # both nodes at once, each over its own loopback
    cross_s = time_sizes(sizes, lay.leaders, reps) if lay.is_leader else []
    dist.barrier()
    if lay.rank == 0:
        write("unshaped")
    wait_for_go(out / spec["go_file"])
    dist.barrier()
    shaped_s = time_sizes(sizes, lay.leaders, reps) if lay.is_leader else []
    largest = torch.ones(sizes[-1] // 4)
    dist.barrier()
    before = link_bytes(ifname) if lay.rank == 0 else (0, 0)
    if lay.is_leader:
        dist.all_reduce(largest, group=lay.leaders)
    dist.barrier()
    after = link_bytes(ifname) if lay.rank == 0 else (0, 0)
    cross_bytes = (after[0] - before[0], after[1] - before[1])
    gen = torch.Generator().manual_seed(lay.rank)
    x = torch.randint(-100, 100, (sizes[-1] // 4,), generator=gen).float()  # exact sums
    flat, hier = x.clone(), x.clone()
    count_reps = int(spec["count_reps"])
    flat_s, flat_bytes = measured(
        lambda: dist.all_reduce(flat.copy_(x)), ifname, count_reps, lay.rank
    )
    hier_s, hier_bytes = measured(
        lambda: lay.hierarchical(hier.copy_(x), sabotage), ifname, count_reps, lay.rank
    )
    agree = torch.tensor([int(torch.equal(flat, hier))])
    dist.all_reduce(agree, op=dist.ReduceOp.MIN)
    per_node: list[Any] = [None] * lay.world
    dist.all_gather_object(per_node, (lay.node, lay.local, intra_s))
    if lay.rank == 0:
        write(
            "report",
            sizes=sizes,
            intra_s={f"node{n}": s for n, local, s in per_node if local == 0},
            cross_s=cross_s,
            shaped_s=shaped_s,
            cross_bytes=list(cross_bytes),
            flat_bytes=list(flat_bytes),
            hier_bytes=list(hier_bytes),
            flat_s=flat_s,
            hier_s=hier_s,
            count_reps=count_reps,
            results_agree=bool(agree.item()),
            ifname=ifname,
        )
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

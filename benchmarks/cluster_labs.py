"""The emulated cluster's costs (issue 38's targets: setup plus teardown <= 1 s; each two-node
lab <= 10 s on this machine).

    python benchmarks/cluster_labs.py [--repeat 3] [--labs node-loss,partition,...]

Times bring_up(2) + teardown (median of --repeat), then each cluster lab at its defaults through
trainer_lab.api.run_lab: the whole run, and the part from the first agent's start (the lab's
`duration_s` observation). The machine is shared: the 1-minute load average is printed too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from trainer_lab.api import run_lab
from trainer_lab.cluster.network import bring_up

LABS = (
    "node-loss",
    "rdzv-host-loss",
    "partition",
    "per-node-state",
    "restart-accounting",
    "slow-link",
)


def cluster_setup(repeat: int) -> tuple[str, float, float]:
    ups, totals = [], []
    mode = ""
    for _ in range(repeat):
        start = time.monotonic()
        cluster = bring_up(2)
        ups.append(time.monotonic() - start)
        cluster.teardown()
        totals.append(time.monotonic() - start)
        mode = cluster.mode
    return mode, statistics.median(ups), statistics.median(totals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--labs", default=",".join(LABS))
    args = parser.parse_args()
    mode, up, total = cluster_setup(args.repeat)
    print(f"load {os.getloadavg()[0]:.1f}")
    print(f"cluster of 2 ({mode}): up {up:.2f} s, up + teardown {total:.2f} s (target <= 1 s)")
    for name in args.labs.split(","):
        with tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder:
            start = time.monotonic()
            result = run_lab(name, {}, None, Path(folder) / "run", 150)
            wall = time.monotonic() - start
        agents = result["observations"].get("duration_s")
        print(
            f"{name}: {result['status']}, {wall:.1f} s in all, {agents} s from the first agent "
            f"(target <= 10 s), load {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()

"""Wall time of each exercise's check on its model answer (median of N runs), as a table.

    python benchmarks/exercises.py [--runs 3] [NAME ...]

Each run is a full check: the harness launches the checker (torchrun with 2 gloo ranks, or one
plain process), the checker imports the model answer and records its checks. A check that does
not pass is reported (the figure would not mean anything).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from trainer_lab.exercises.catalogue import EXERCISES
from trainer_lab.exercises.runner import check_exercise


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("names", nargs="*", default=list(EXERCISES))
    args = parser.parse_args(argv)
    width = max(len(n) for n in args.names)
    print(f"{'exercise':<{width}}  ranks  median s    min s    max s  status")
    bad = 0
    for name in args.names:
        spec = EXERCISES[name]
        times, statuses = [], set()
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as out:
                start = time.perf_counter()
                result = check_exercise(spec, spec.solution_path, Path(out))
                times.append(time.perf_counter() - start)
                statuses.add(result["status"])
        status = "ok" if statuses == {"ok"} else ",".join(sorted(statuses))
        bad += status != "ok"
        ranks = spec.world_size or 1
        print(f"{name:<{width}}  {ranks:>5}  {statistics.median(times):>8.1f} "
              f"{min(times):>8.1f} {max(times):>8.1f}  {status}")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""FSRS parameter fit on synthetic review logs (a script, not a test).

For 10,000 and 100,000 reviews of a simulated learner (tests/support/synthetic_reviews.py)
prints the median over several runs of
  (a) the fit in process: review histories -> FSRSItems, evaluate, compute_parameters (fsrs-rs),
      evaluate again (drill.review.optimize.fit_parameters);
  (b) the whole `FitJob` the app and `drill optimize` run: a fresh worker process that reads the
      log from SQLite, fits and reports back;
and the log loss before (fsrs defaults) and after. Target: (b) <= 5 s for 10,000 reviews.

    python benchmarks/fsrs_optimize.py [--runs 5] [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drill.review.optimize import FitJob, fit_parameters
from tests.support.synthetic_reviews import synthetic_reviews, write_review_log


def _median(samples: list[float]) -> str:
    return f"{statistics.median(samples):6.2f} s (min {min(samples):.2f}, max {max(samples):.2f})"


def bench(size: int, runs: int) -> None:
    reviews = synthetic_reviews(size)
    in_process: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fit_parameters(reviews, tz=UTC)
        in_process.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as tmp:
        db = write_review_log(Path(tmp) / "drill.sqlite3", reviews)
        job: list[float] = []
        for _ in range(runs):
            start = time.perf_counter()
            FitJob(db).run()
            job.append(time.perf_counter() - start)
    print(f"{size:>7} reviews ({result.items} usable), {runs} runs")
    print(f"  fit in process     median {_median(in_process)}")
    print(f"  FitJob subprocess  median {_median(job)}")
    print(
        f"  log loss: defaults {result.before.log_loss:.4f} -> fitted {result.after.log_loss:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    for size in args.sizes:
        bench(size, args.runs)


if __name__ == "__main__":
    main()

"""Wall time of the coding round's grading on the model answer.

    python benchmarks/coding_round.py [--repeat 3] [--parallel 2] [--phases skeleton,restart]
                                      [--skip-full] [--skip-phases]

Times `trainer_lab.grading.grade` (what `drill mock grade` does) on the model answer: each
phase alone (its launches only), then the full grading (every phase, shared runs once), median of
--repeat runs each, with the load average at the start. Also reports how long each launch took
in the full grading and checks that every check held.
Targets on the 2-core dev box: each phase <= 30 s, the full grading <= 90 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainer_lab.grading import PHASES, grade, model_answer_source

PHASE_TARGET_S = 30.0
FULL_TARGET_S = 90.0


def time_grading(phases: tuple[str, ...], parallel: int, root: Path) -> tuple[float, dict]:
    root.mkdir(parents=True)
    script = root / "train.py"
    script.write_text(model_answer_source())
    start = time.monotonic()
    result = grade(script, root / "out", phases=phases, parallel=parallel)
    elapsed = time.monotonic() - start
    failed = [c["name"] for c in result["checks"] if not c["passed"]]
    if failed:
        print(f"  WARNING: the model answer failed {failed}", flush=True)
    return elapsed, result


def report(name: str, times: list[float], target: float) -> None:
    median = statistics.median(times)
    verdict = "ok" if median <= target else "OVER"
    runs = ", ".join(f"{t:.1f}" for t in times)
    print(f"{name:<12} median {median:6.1f} s  target {target:4.0f} s  {verdict}  ({runs})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=2, help="launches at a time")
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--skip-full", action="store_true")
    parser.add_argument("--skip-phases", action="store_true")
    args = parser.parse_args()
    phases = tuple(p for p in args.phases.split(",") if p)
    print(
        f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, "
        f"parallel {args.parallel}, repeat {args.repeat}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="coding-bench-") as tmp:
        n = 0
        if not args.skip_phases:
            for phase in phases:
                times = []
                for _ in range(args.repeat):
                    n += 1
                    elapsed, _ = time_grading((phase,), args.parallel, Path(tmp) / str(n))
                    times.append(elapsed)
                report(phase, times, PHASE_TARGET_S)
        if not args.skip_full:
            times = []
            result: dict = {}
            for _ in range(args.repeat):
                n += 1
                elapsed, result = time_grading(PHASES, args.parallel, Path(tmp) / str(n))
                times.append(elapsed)
            report("full", times, FULL_TARGET_S)
            launches = ", ".join(
                f"{name} {secs:.1f}"
                for name, secs in result["observations"]["launch_seconds"].items()
            )
            print(f"  launches (last full run, s): {launches}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

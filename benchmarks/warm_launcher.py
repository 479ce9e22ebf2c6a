"""The warm launcher against torchrun, measured in one run (issue 23's targets).

    python benchmarks/warm_launcher.py [--only labs,exercises,grade,verify,first-line]
                                       [--repeat 1] [--cold-verify]

- labs: every bundled lab at its defaults through trainer_lab.api.run_lab, warm and torchrun,
  beside a bare `python -c "import torch"` (median of 3): per-lab times, the median over the labs,
  and the warm median divided by the bare import (target <= 2.5 s and <= 2.5x).
- first-line: `l` on a card, after the session's first lab: seconds from run_lab to its first
  progress line, warm (target <= 1 s).
- exercises: every exercise's model answer through check_exercise, warm and torchrun (target
  median <= 3 s).
- grade: `drill mock grade` on the coding round's model answer, all phases, as a command (its
  own warm server), warm and torchrun (target <= 15 s).
- verify: cold `drill verify` over every bundled card as a command with an empty DRILL_HOME,
  warm (target <= 75 s); --cold-verify also times it with TRAINER_LAB_LAUNCHER=torchrun.
The machine is shared: the 1-minute load average is printed with each part.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from trainer_lab.api import run_lab  # noqa: E402
from trainer_lab.catalogue import CATALOGUE  # noqa: E402
from trainer_lab.warm.client import close_default_server, default_server  # noqa: E402

MODES = ("warm", "torchrun")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def timed(action: Callable[[], object]) -> float:
    start = time.monotonic()
    action()
    return time.monotonic() - start


def bare_torch_import() -> float:
    runs = [
        timed(lambda: subprocess.run([sys.executable, "-c", "import torch"], check=True))
        for _ in range(3)
    ]
    return statistics.median(runs)


def warm_up() -> None:
    server = default_server()
    if server is None:
        raise SystemExit("the warm server could not start")
    server.wait_ready()
    print(f"warm server ready, preload {server.preload_s:.2f} s")


def one_lab(name: str, mode: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        result = run_lab(name, out_dir=Path(tmp) / "run", mode=mode)  # type: ignore[arg-type]
        elapsed = time.monotonic() - start
    if result["status"] != "ok":
        print(f"  {name} {mode}: status {result['status']}")
    return elapsed


def bench_labs(repeat: int) -> None:
    print(f"\n## labs ({load()})")
    bare = bare_torch_import()
    print(f"bare `python -c 'import torch'`: {bare:.2f} s")
    warm_up()
    medians: dict[str, list[float]] = {mode: [] for mode in MODES}
    for name in sorted(CATALOGUE):
        for mode in MODES:
            medians[mode].append(statistics.median(one_lab(name, mode) for _ in range(repeat)))
        warm, cold = medians["warm"][-1], medians["torchrun"][-1]
        print(f"  {name:<26} warm {warm:5.2f} s  torchrun {cold:5.2f} s  ({cold / warm:.1f}x)")
    warm, cold = statistics.median(medians["warm"]), statistics.median(medians["torchrun"])
    print(
        f"median over {len(CATALOGUE)} labs: warm {warm:.2f} s, torchrun {cold:.2f} s "
        f"({cold / warm:.1f}x); warm / bare import {warm / bare:.2f} (targets <= 2.5 s, <= 2.5x)"
    )


def first_line(name: str) -> float:
    seen: list[float] = []
    start = time.monotonic()

    def on_progress(_event: object) -> None:
        if not seen:
            seen.append(time.monotonic() - start)

    with tempfile.TemporaryDirectory() as tmp:
        run_lab(name, out_dir=Path(tmp) / "run", mode="warm", on_progress=on_progress)
    return seen[0] if seen else float("nan")


def bench_first_line() -> None:
    print(f"\n## first live line ({load()})")
    warm_up()
    first_line("ddp-baseline")  # the session's first lab
    for name in ("ddp-baseline", "resume", "hang"):
        print(f"  {name}: first progress line after {first_line(name):.2f} s (target <= 1 s)")


def bench_exercises() -> None:
    from trainer_lab.exercises.catalogue import EXERCISES
    from trainer_lab.exercises.runner import check_exercise

    print(f"\n## exercise checks, model answers ({load()})")
    warm_up()
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for name, spec in sorted(EXERCISES.items()):
        row = []
        for mode in MODES:
            os.environ["TRAINER_LAB_LAUNCHER"] = mode
            with tempfile.TemporaryDirectory() as tmp:
                times[mode].append(
                    timed(lambda s=spec, t=tmp: check_exercise(s, s.solution_path, Path(t) / "o"))
                )
            row.append(f"{mode} {times[mode][-1]:5.2f} s")
        print(f"  {name:<26} " + "  ".join(row))
    os.environ.pop("TRAINER_LAB_LAUNCHER", None)
    warm, cold = statistics.median(times["warm"]), statistics.median(times["torchrun"])
    print(f"median: warm {warm:.2f} s, torchrun {cold:.2f} s ({cold / warm:.1f}x; target <= 3 s)")


def command(args: list[str], mode: str) -> float:
    with tempfile.TemporaryDirectory(prefix="drill-bench-") as home:
        env = {**os.environ, "DRILL_HOME": home, "COLUMNS": "200", "TRAINER_LAB_LAUNCHER": mode}
        entry = "import sys; from drill.cli.main import main; sys.exit(main(sys.argv[1:]))"
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", entry, *args], env=env, capture_output=True)
        elapsed = time.monotonic() - start
    if proc.returncode != 0:
        print(
            f"  exit {proc.returncode}: {proc.stdout.decode()[-400:]} {proc.stderr.decode()[-400:]}"
        )
    return elapsed


def bench_grade() -> None:
    print(f"\n## drill mock grade, model answer, all phases ({load()})")
    answer = str(ROOT / "trainer_lab" / "grading" / "files" / "train.py")
    for mode in MODES:
        print(f"  {mode}: {command(['mock', 'grade', answer], mode):.1f} s (target warm <= 15 s)")


def bench_verify(cold_too: bool) -> None:
    print(f"\n## cold drill verify, every bundled card ({load()})")
    for mode in MODES if cold_too else ("warm",):
        print(f"  {mode}: {command(['verify'], mode):.1f} s (target warm <= 75 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="labs,first-line,exercises,grade,verify")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cold-verify", action="store_true")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    print(f"cores: {os.cpu_count()}  python {sys.version.split()[0]}")
    try:
        if "labs" in parts:
            bench_labs(args.repeat)
        if "first-line" in parts:
            bench_first_line()
        if "exercises" in parts:
            bench_exercises()
    finally:
        close_default_server()
    if "grade" in parts:
        bench_grade()
    if "verify" in parts:
        bench_verify(args.cold_verify)


if __name__ == "__main__":
    main()

"""Verdicts of the timed checks under load: each right answer must pass and each known-wrong
timing variant must fail, every time, with and without a CPU hog.

    python benchmarks/timed_checks.py [--runs 20] [--coding-runs 3] [--skip-coding]

The hog is one busy-loop subprocess per hog slot, 2x the cores, started before the loaded pass
and killed (by pid) at the end. Timed checks:
- phase-timing (exercise): its checker run in this process on each PhaseTimer file (the model
  answer, tests/.../right/phase_timing_*.py, tests/.../wrong/phase_timing_*.py), --runs times.
- monitoring.phases_add_up (coding round): `grade(..., phases=("monitoring",))` on the model
  answer and on patched copies of it, --coding-runs times (a grading takes 10-40 s).
Prints, per check and answer, how many runs passed (a coding run that stalled before its first
optimizer step is printed, not counted); a right answer below N/N or a wrong one
above 0/N is a false verdict, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from tests.support.phase_timing import check_timer  # noqa: E402
from tests.trainer_lab.exercises.cases import RIGHT_DIR, STARTER, WRONG, WRONG_DIR  # noqa: E402
from trainer_lab.exercises.catalogue import EXERCISES  # noqa: E402

HOG_CODE = "while True: pass"
# a grading whose run stalled before its first optimizer step (cold imports on a loaded machine)
# says nothing about the step timer: it is printed and not counted
NEVER_STEPPED = "(no optimizer step yet)"

# the coding round's model answer and patched copies: (old, new) text replacements
CODING: dict[str, tuple[bool, list[tuple[str, str]]]] = {
    "right_model": (True, []),
    # another style: step_time from its own clock, read after the phases are gathered
    "right_own_step_clock": (
        True,
        [
            (
                "        t0 = time.perf_counter()\n",
                "        t0 = time.perf_counter()\n        step_start = time.monotonic()\n",
            ),
            ('"step_time": t5 - t0}', '"step_time": time.monotonic() - step_start}'),
        ],
    ),
    "wrong_optimizer_untimed": (False, [('            "optimizer": t4 - t3,\n', "")]),
    # phases summed since the start of the run, step_time per step
    "wrong_cumulative_phases": (
        False,
        [
            ("    while step < args.steps:\n", "    running = {}\n    while step < args.steps:\n"),
            (
                "        if rank == 0:  # one log line per step, from one rank\n",
                "        running = {k: running.get(k, 0.0) + v for k, v in phases.items()}\n"
                "        phases = dict(running)\n"
                "        if rank == 0:  # one log line per step, from one rank\n",
            ),
        ],
    ),
    "wrong_step_span_no_data": (False, [('"step_time": t5 - t0}', '"step_time": t5 - t1}')]),
    "wrong_data_untimed": (False, [('            "data": t1 - t0,\n', "")]),
}


@contextmanager
def cpu_hog(slots: int) -> Iterator[list[subprocess.Popen]]:
    procs = [subprocess.Popen([sys.executable, "-c", HOG_CODE]) for _ in range(slots)]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def phase_timing_answers() -> dict[str, tuple[bool, Path]]:
    spec = EXERCISES["phase-timing"]
    answers = {"right_model": (True, spec.solution_path)}
    for file in sorted(RIGHT_DIR.glob("phase_timing_*.py")):
        answers["right_" + file.stem.removeprefix("phase_timing_")] = (True, file)
    answers["wrong_starter"] = (False, spec.starter_path)
    for file in sorted(WRONG["phase-timing"]):
        answers["wrong_" + file.removeprefix("phase_timing_").removesuffix(".py")] = (
            False,
            WRONG_DIR / file,
        )
    return answers


def expected_failing(name: str) -> frozenset[str] | None:
    if name == "wrong_starter":
        return STARTER["phase-timing"].failing
    file = "phase_timing_" + name.removeprefix("wrong_") + ".py"
    expect = WRONG["phase-timing"].get(file)
    return expect.failing if expect else None


def run_phase_timing(runs: int, root: Path) -> dict[str, list[frozenset[str]]]:
    """Per answer, the set of failing checks of each run."""
    torch.set_num_threads(1)  # as the exercise harness runs its checker
    out: dict[str, list[frozenset[str]]] = {}
    for name, (_, path) in phase_timing_answers().items():
        for i in range(runs):
            got = check_timer(path, root / f"{name}-{i}")
            out.setdefault(name, []).append(frozenset(c for c, v in got.items() if not v["passed"]))
    return out


def coding_source(patches: list[tuple[str, str]]) -> str:
    from trainer_lab.grading import model_answer_source

    source = model_answer_source()
    for old, new in patches:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def run_monitoring(runs: int, root: Path) -> dict[str, list[frozenset[str]]]:
    from trainer_lab.grading import grade

    out: dict[str, list[frozenset[str]]] = {}
    for name, (_, patches) in CODING.items():
        for i in range(runs):
            folder = root / f"{name}-{i}"
            folder.mkdir(parents=True)
            script = folder / "train.py"
            script.write_text(coding_source(patches))
            result = grade(script, folder / "out", phases=("monitoring",))
            failing = frozenset(c["name"] for c in result["checks"] if not c["passed"])
            detail = next(
                c["detail"] for c in result["checks"] if c["name"] == "monitoring.phases_add_up"
            )
            if NEVER_STEPPED in detail:  # a load stall before any step: no verdict on timing
                print(f"    {name}: not counted: {detail[:120]}", flush=True)
                continue
            out.setdefault(name, []).append(failing)
            if "monitoring.phases_add_up" in failing or name.startswith("wrong"):
                print(f"    {name}: {detail[:120]}", flush=True)
    return out


def report(
    check: str,
    rights: set[str],
    results: dict[str, list[frozenset[str]]],
    load: str,
    reason: Callable[[str], frozenset[str] | None],
) -> int:
    """Print pass counts; return the number of false verdicts."""
    false = 0
    for name, runs in results.items():
        passed = sum(1 for failing in runs if not failing)
        right = name in rights
        false += (len(runs) - passed) if right else passed
        line = f"{check:<24} {name:<28} {passed:>2}/{len(runs)} pass {load}"
        expected = reason(name)
        if not right and expected is not None:
            same = sum(1 for failing in runs if failing == expected)
            line += f"  (fails exactly {sorted(expected)}: {same}/{len(runs)})"
        print(line, flush=True)
    return false


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--coding-runs", type=int, default=3)
    parser.add_argument("--skip-coding", action="store_true")
    args = parser.parse_args(argv)
    slots = 2 * (os.cpu_count() or 1)
    phase_rights = {n for n, (ok, _) in phase_timing_answers().items() if ok}
    coding_rights = {n for n, (ok, _) in CODING.items() if ok}
    false = 0
    print(f"{os.cpu_count()} cores; hog: {slots} busy-loop processes", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for load in ("without hog", "under hog"):
            root = Path(tmp) / load.replace(" ", "-")
            hog = cpu_hog(slots if load == "under hog" else 0)
            with hog:
                timing = run_phase_timing(args.runs, root / "phase-timing")
                false += report("phase-timing", phase_rights, timing, load, expected_failing)
                if not args.skip_coding:
                    coding = run_monitoring(args.coding_runs, root / "monitoring")
                    false += report(
                        "monitoring.phases_add_up", coding_rights, coding, load, lambda _: None
                    )
    print(f"false verdicts: {false}")
    return 1 if false else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

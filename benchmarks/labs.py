"""Lab wall times and the trainer's instrumentation overhead.

    python benchmarks/labs.py [--labs ddp-baseline,sampler,hang:skip,... | --all] [--repeat 3]
                              [--world-size N] [--skip-labs] [--skip-overhead] [--list]

Wall time: each lab through trainer_lab.api.run_lab (what `drill lab run` does), median of
--repeat runs, at each lab's default world size unless --world-size is given (labs that do not
accept it are listed as skipped). `--all` runs every lab in the catalogue and, for a lab with a
`scenario` parameter (hang, step-phases), every scenario; `NAME:SCENARIO` picks one.
Overhead: benchmarks/trainer_overhead.py (Trainer.train_step against a bare
loop over the same Trainer's model, data, optimizer and scheduler, alternating blocks,
per-step medians) for the lab-size MLP and one whose step takes ~5 ms.
Targets on the 2-core dev box: each lab and scenario <= 30 s (issue 4; 20 s for issue 3's
labs), ratio <= 1.05.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # trainer_overhead

MY_LABS = ("ddp-baseline", "sampler", "resume")
TARGET_S = 30.0


@dataclass(frozen=True)
class Entry:
    """One thing to time: a lab, with its scenario when it has one."""

    lab: str
    scenario: str | None = None

    @property
    def label(self) -> str:
        return f"{self.lab}:{self.scenario}" if self.scenario else self.lab

    @property
    def params(self) -> dict[str, Any]:
        return {"scenario": self.scenario} if self.scenario else {}


def scenarios_of(lab: str) -> tuple[str, ...]:
    from trainer_lab.catalogue import get_lab

    for param in get_lab(lab).params:
        if param.name == "scenario":
            return tuple(param.choices or ())
    return ()


def all_entries() -> list[Entry]:
    from trainer_lab.catalogue import CATALOGUE

    entries: list[Entry] = []
    for lab in CATALOGUE:
        scenarios = scenarios_of(lab)
        entries.extend([Entry(lab, s) for s in scenarios] if scenarios else [Entry(lab)])
    return entries


def parse_entries(text: str) -> list[Entry]:
    """`lab` or `lab:scenario`, comma-separated; names are checked against the catalogue."""
    from trainer_lab.catalogue import get_lab

    entries = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        lab, _, scenario = item.partition(":")
        get_lab(lab)  # UnknownLabError names the valid labs
        if scenario and scenario not in scenarios_of(lab):
            raise ValueError(f"{lab} has no scenario {scenario!r} (has: {scenarios_of(lab)})")
        entries.append(Entry(lab, scenario or None))
    return entries


def bench_labs(entries: list[Entry], world_size: int | None, repeat: int) -> None:
    from trainer_lab.api import run_lab
    from trainer_lab.catalogue import get_lab

    where = f"W={world_size}" if world_size else "each lab's default W"
    print(
        f"lab wall time at {where}, median of {repeat} (run_lab, like `drill lab run`); "
        f"target <= {TARGET_S:g} s; load average at start {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )
    print(f"  {'lab[:scenario]':<28} {'W':>2} {'median':>8} {'min':>7} {'max':>7}  status")
    over = []
    for entry in entries:
        spec = get_lab(entry.lab)
        w = world_size or spec.default_world_size
        if not spec.min_world_size <= w <= spec.max_world_size:
            limits = f"[{spec.min_world_size}, {spec.max_world_size}]"
            print(f"  {entry.label:<28} {w:>2}  skipped: W out of {limits}")
            continue
        times, statuses, problems = [], set(), []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as out:
                start = time.perf_counter()
                result = run_lab(entry.lab, entry.params, w, Path(out))
                times.append(time.perf_counter() - start)
            statuses.add(result["status"])
            if result.get("error"):
                problems.append(f"{result['status']}: {result['error']['message']}")
            failed = [c["name"] for c in result["checks"] if not c["passed"]]
            if failed:
                problems.append(f"failed checks: {', '.join(failed)}")
        median = statistics.median(times)
        flag = "  OVER" if median > TARGET_S else ""
        if flag:
            over.append(entry.label)
        print(
            f"  {entry.label:<28} {w:>2} {median:7.2f}s {min(times):6.2f}s {max(times):6.2f}s  "
            f"{','.join(sorted(statuses))}{flag}",
            flush=True,
        )
        for problem in problems:  # why a run was not ok, one line each
            print(f"      {problem.splitlines()[0][:200]}", flush=True)
    print(f"  over {TARGET_S:g} s: {', '.join(over) if over else 'none'}")


def bench_overhead(blocks: int, block_steps: int) -> None:
    # The overhead benchmark lives in trainer_overhead.py (one Trainer for both loops,
    # per-step medians); this runs it for the lab-size MLP and the ~5 ms one.
    import torch
    from trainer_overhead import SIZES, measure

    torch.set_num_threads(1)
    print(
        f"instrumentation overhead, single process: {blocks} alternating blocks of "
        f"{block_steps} steps (bare, instrumented), per-step medians; target ratio <= 1.05"
    )
    for size in ("lab", "5ms"):
        r = measure(size, blocks, block_steps)
        print(
            f"  {SIZES[size][0]:<38} bare {r['bare_ms']:7.3f} ms  "
            f"instrumented {r['instrumented_ms']:7.3f} ms  (+{r['overhead_us']:5.0f} us/step)  "
            f"ratio {r['ratio']:5.3f}",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--labs", default=",".join(MY_LABS), help="comma-separated lab or lab:scenario names"
    )
    parser.add_argument("--all", action="store_true", help="every lab and every scenario")
    parser.add_argument("--list", action="store_true", help="print what --all would run")
    parser.add_argument("--world-size", type=int, default=None, help="default: each lab's")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=30, help="overhead: alternating blocks")
    parser.add_argument("--block-steps", type=int, default=20, help="overhead: steps a block")
    parser.add_argument("--skip-labs", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    if args.list:
        print("\n".join(entry.label for entry in all_entries()))
        return 0
    from trainer_lab.catalogue import UnknownLabError

    try:
        entries = all_entries() if args.all else parse_entries(args.labs)
    except (UnknownLabError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not args.skip_overhead:
        bench_overhead(args.blocks, args.block_steps)
    if not args.skip_labs:
        bench_labs(entries, args.world_size, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

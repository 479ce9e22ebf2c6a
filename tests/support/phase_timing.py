"""Run the phase-timing checker in this process on a PhaseTimer file (no harness, no torchrun):
the unit tests and benchmarks/timed_checks.py judge timers this way."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from trainer_lab.exercises._checker.ctx import Ctx
from trainer_lab.exercises.phase_timing import check
from trainer_lab.exercises.protocol import checks_file


def check_timer(user_file: Path, run_dir: Path) -> dict[str, dict]:
    """{check name: {"passed", "detail"}} for the PhaseTimer in `user_file`, loaded afresh (a
    timer that caches what it learnt about the machine starts from nothing each time)."""
    spec = importlib.util.spec_from_file_location(f"phase_timer_{id(run_dir)}", user_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / checks_file(0)).unlink(missing_ok=True)
    check.run(Ctx(module, user_file, run_dir))
    lines = (run_dir / checks_file(0)).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return {r["check"]: {"passed": r["passed"], "detail": r["detail"]} for r in records}

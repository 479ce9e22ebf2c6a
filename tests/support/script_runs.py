"""Script runs written by hand for the coding grader's checks: a run folder whose observe/
files and rank stdout logs say what a test needs (no process runs)."""

from __future__ import annotations

import json
from pathlib import Path

from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun


def fake_run(tmp_path: Path, world: int, files: dict[str, list[dict]]) -> ScriptRun:
    """A finished run at `world` ranks whose observe/ folder holds `files` (name -> records)."""
    launch = ScriptLaunch("t", tmp_path / "train.py", (), world, tmp_path, tmp_path / "ckpt", 10)
    observe = tmp_path / "observe"
    observe.mkdir(parents=True, exist_ok=True)
    for name, records in files.items():
        (observe / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    return ScriptRun(launch, "ok", 0, 1.0)


def write_stdout(run: ScriptRun, rank: int, lines: list[dict]) -> None:
    """What rank `rank` printed: one JSON line per record."""
    logs = run.run_dir / "logs" / "x" / "attempt_0" / str(rank)
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "stdout.log").write_text("".join(json.dumps(line) + "\n" for line in lines))

"""A graded run of user code as a lab result (torch-free), shared by the coding-round grader
(trainer_lab.grading) and the exercise runner (trainer_lab.exercises.runner).

    result = begin(lab, params, world_size, out_dir)
    source = read_script(path); error = syntax_error(source, name)    # trainer_lab.usercode.source
    if error: not_compiled(result, check_names, error)                # no run at all
    else:     write_workspace(...); run; result["checks"] = [...]
    return finish(result, out_dir, started)                          # tally, status, result.json
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trainer_lab.result import Check, LabResult, new_result, write_result


def check(name: str, passed: bool, detail: str) -> Check:
    return {"name": name, "passed": bool(passed), "detail": detail}


def begin(lab: str, params: dict[str, Any], world_size: int, out_dir: Path) -> LabResult:
    """A new result; user code runs on CPU, so the backend is gloo when it runs distributed."""
    result = new_result(lab, params, world_size, out_dir)
    result["env"]["backend"] = "gloo" if world_size else None
    return result


def not_compiled(result: LabResult, names: Iterable[str], error: str) -> None:
    """Every check fails with the compile error: a file that does not compile is never run."""
    result["checks"] = [check(name, False, f"not run: {error}") for name in names]
    result["observations"] = {"syntax_error": error}


def write_workspace(workspace: Path, texts: Mapping[str, str], copies: Iterable[Path] = ()) -> None:
    """The run's cwd: the user's text (a copy, so edits made during the run do not race it) and
    the given files."""
    workspace.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (workspace / name).write_text(text)
    for path in copies:
        shutil.copyfile(path, workspace / path.name)


def finish(
    result: LabResult, out_dir: Path, started: float, extra: Mapping[str, Any] | None = None
) -> LabResult:
    """Count the checks that held, set the status (ok only when every check held; a cancelled
    run stays cancelled), add `extra` to the observations, then write out_dir/result.json."""
    passed = sum(c["passed"] for c in result["checks"])
    result["observations"].update(
        {"checks_passed": passed, "checks_total": len(result["checks"]), **(extra or {})}
    )
    if result["status"] != "cancelled":
        result["status"] = "ok" if passed == len(result["checks"]) else "failed"
    result["duration_s"] = round(time.monotonic() - started, 3)
    write_result(out_dir, result)
    return result

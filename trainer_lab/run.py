"""Lab driver entry point (torch-free): run one lab, write DIR/result.json.

    python -m trainer_lab.run NAME --params JSON --world-size N --out DIR --timeout S

Progress goes to stdout as JSON lines ({"event": "progress", "done", "total", "message"}),
the final line is {"event": "result", "path": ".../result.json", "status": ...}.
Exit status: 0 every check passed, 1 a check failed, 2 usage error, 3 error or timeout.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
import traceback
from importlib import metadata
from pathlib import Path
from typing import Any

from trainer_lab.catalogue import check_world_size, get_lab
from trainer_lab.catalogue_types import LabSpec, ParamError
from trainer_lab.lab import LabError, LabRun, LabTimeout, emit
from trainer_lab.procs import PARENT_ENV, become_subreaper, die_with_parent

EXIT_FOR_STATUS = {"ok": 0, "failed": 1, "error": 3, "timeout": 3, "cancelled": 3}


def torch_version() -> str:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "not installed"


def write_result(out_dir: Path, result: dict[str, Any]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "result.json"
    tmp = out_dir / ".result.json.tmp"
    tmp.write_text(json.dumps(result, indent=1, default=str))
    tmp.replace(path)
    return path


def base_result(
    spec_name: str, params: dict[str, Any], world_size: int, out_dir: Path
) -> dict[str, Any]:
    return {
        "lab": spec_name,
        "params": params,
        "world_size": world_size,
        "status": "error",
        "observations": {},
        "checks": [],
        "duration_s": 0.0,
        "env": {
            "torch": torch_version(),
            "backend": None,
            "world_size": world_size,
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "error": None,
        "launches": [],
        "out_dir": str(out_dir),
    }


def execute(
    spec: LabSpec, params: dict[str, Any], world_size: int, out_dir: Path, timeout_s: float
) -> dict[str, Any]:
    """Run the lab's driver in this process and return the result dict (never raises for
    lab failures: they become status error/timeout with the root cause)."""
    start = time.monotonic()
    run = LabRun(spec, params, world_size, out_dir, deadline=start + timeout_s)
    result = base_result(spec.name, params, world_size, out_dir)
    module_name, _, func_name = spec.driver.partition(":")
    try:
        driver = getattr(importlib.import_module(module_name), func_name or "drive")
        driver(run)
        failed = [c for c in run.checks if not c["passed"]]
        if not run.checks:
            result["status"] = "error"
            result["error"] = {"message": "the lab reported no checks", "root_cause": None}
        else:
            result["status"] = "failed" if failed else "ok"
    except LabError as error:
        result["status"] = "timeout" if isinstance(error, LabTimeout) else "error"
        result["error"] = {
            "message": str(error),
            "root_cause": error.root_cause.to_dict() if error.root_cause else None,
        }
    except Exception as error:  # a bug in a driver: report it in result.json, not a traceback
        result["status"] = "error"
        result["error"] = {
            "message": f"lab driver crashed: {type(error).__name__}: {error}",
            "root_cause": {
                "rank": None,
                "kind": "driver",
                "message": str(error),
                "traceback": traceback.format_exc(),
            },
        }
    result["observations"] = run.observations
    result["checks"] = run.checks
    result["launches"] = run.launches
    result["env"]["backend"] = run.backend
    result["duration_s"] = round(time.monotonic() - start, 3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trainer_lab.run", description="Run one trainer_lab lab."
    )
    parser.add_argument("name")
    parser.add_argument("--params", default="{}", help="JSON object of param values")
    parser.add_argument("--world-size", type=int, default=None)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=None)
    args = parser.parse_args(argv)
    expected = os.environ.get(PARENT_ENV)
    die_with_parent(int(expected) if expected else None)
    become_subreaper()
    try:
        spec = get_lab(args.name)
        given = json.loads(args.params)
        if not isinstance(given, dict):
            raise ParamError("--params must be a JSON object")
        params = spec.resolve_params(given)
        world_size = check_world_size(spec, args.world_size or spec.default_world_size)
    except (ParamError, json.JSONDecodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    result = execute(spec, params, world_size, args.out, args.timeout or spec.timeout_s)
    path = write_result(args.out, result)
    emit({"event": "result", "path": str(path), "status": result["status"]})
    return EXIT_FOR_STATUS[result["status"]]


if __name__ == "__main__":
    sys.exit(main())

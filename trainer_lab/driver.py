"""Lab driver entry point (torch-free): run one lab, write DIR/result.json.

    python -m trainer_lab.driver NAME --params JSON --world-size N --out DIR --timeout S

Progress goes to stdout as JSON lines ({"event": "progress", "done", "total", "message"}),
the final line is {"event": "result", "path": ".../result.json", "status": ...}.
Exit status: 0 every check passed, 1 a check failed, 2 usage error, 3 error, timeout or cancel.
SIGTERM, SIGHUP or SIGINT cancel the run: the running launch is killed and result.json records
status `cancelled` with the observations and checks made so far.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

from trainer_lab.catalogue import check_timeout, get_lab, resolve_world_size
from trainer_lab.catalogue_types import LabSpec, ParamError
from trainer_lab.context import LabCancelled, LabContext, LabError, LabTimeout, emit
from trainer_lab.procs import PARENT_ENV, become_subreaper, die_with_parent
from trainer_lab.result import EXIT_FOR_STATUS, LabResult, new_result, write_result

CANCEL_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def execute(
    spec: LabSpec,
    params: dict[str, Any],
    world_size: int,
    out_dir: Path,
    timeout_s: float,
    cancel: threading.Event | None = None,
) -> LabResult:
    """Run the lab's driver in this process and return its result (never raises for lab
    failures: they become status error/timeout/cancelled with the root cause)."""
    start = time.monotonic()
    run = LabContext(spec, params, world_size, out_dir, deadline=start + timeout_s, cancel=cancel)
    result = new_result(spec.name, params, world_size, out_dir)
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
        if isinstance(error, LabCancelled):
            result["status"] = "cancelled"
        else:
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


def _cancel_on_signals(cancel: threading.Event) -> None:
    def handler(signum: int, _frame: FrameType | None) -> None:
        cancel.set()

    for sig in CANCEL_SIGNALS:
        signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    cancel = threading.Event()
    _cancel_on_signals(cancel)  # first: a cancel that comes early still gets a result.json
    parser = argparse.ArgumentParser(
        prog="python -m trainer_lab.driver", description="Run one trainer_lab lab."
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
        world_size = resolve_world_size(spec, args.world_size)
        timeout = check_timeout(spec.timeout_s if args.timeout is None else args.timeout)
    except (ParamError, json.JSONDecodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    result = execute(spec, params, world_size, args.out, timeout, cancel)
    path = write_result(args.out, result)
    emit({"event": "result", "path": str(path), "status": result["status"]})
    return EXIT_FOR_STATUS[result["status"]]


if __name__ == "__main__":
    sys.exit(main())

"""The lab-result contract (torch-free): what one run of a lab leaves in its run directory.

A run directory holds:
- `result.json` (RESULT_FILE): one `LabResult`, written atomically by `write_result`;
- `events-rank{R}.jsonl` (`events_file(R)`): one JSON object a line per rank (trainer_lab.events);
- `failures/rank{R}.json` (FAILURES_DIR): a rank's uncaught error, written by the worker;
- `runs/<variant>/` (VARIANTS_DIR): the same layout again for each launch of a multi-launch lab.

Everything in `drill` that reads a result goes through `read_result` (or `load_result_file` for a
copy, e.g. drill verify's cache), which checks the shape and fills defaults, so readers index
typed fields instead of `.get()`-ing an unknown dict. A run that ends early still gets a result:
the driver writes status `cancelled` (or timeout/error) with what it observed so far, and
trainer_lab.api writes one with `ended_result` when the driver could not.
"""

from __future__ import annotations

import json
import math
import platform
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, cast, get_args

from trainer_lab.files import FileRefused, read_regular, replace_file

RESULT_FILE = "result.json"
FAILURES_DIR = "failures"
VARIANTS_DIR = "runs"
EVENTS_GLOB = "events-rank*.jsonl"
MAX_RESULT_BYTES = 32 * 1024**2  # a result's observations are well under a MiB

Status = Literal["ok", "failed", "error", "timeout", "cancelled"]
STATUSES: tuple[str, ...] = get_args(Status)
EXIT_FOR_STATUS: dict[str, int] = {"ok": 0, "failed": 1, "error": 3, "timeout": 3, "cancelled": 3}


def events_file(rank: int) -> str:
    return f"events-rank{rank}.jsonl"


def events_rank(name: str) -> int | None:
    """The rank whose events file is named `name` (see events_file); None for any other name."""
    digits = name.removeprefix("events-rank").removesuffix(".jsonl")
    if not digits.isdigit() or events_file(int(digits)) != name:
        return None
    return int(digits)


def failure_file(rank: int) -> str:
    """A rank's failure record, relative to the run directory."""
    return f"{FAILURES_DIR}/rank{rank}.json"


def variant_dir(run_dir: Path, variant: str) -> Path:
    return run_dir / VARIANTS_DIR / variant


class Check(TypedDict):
    name: str
    passed: bool
    detail: str  # for people: nothing parses it
    # what the check saw, as data (JSON values); the keys a grader writes are its contract, e.g.
    # the coding round's: trainer_lab.grading.facts
    facts: NotRequired[dict[str, Any]]


class RootCauseInfo(TypedDict, total=False):
    """trainer_lab.launcher.RootCause as JSON."""

    rank: int | None
    kind: str  # exception | signal | exit | hang | cancelled | driver | planned
    message: str
    traceback: str


class ErrorInfo(TypedDict, total=False):
    message: str
    root_cause: RootCauseInfo | None


class LaunchInfo(TypedDict, total=False):
    """One torchrun launch of the lab (trainer_lab.launcher.LaunchResult.to_dict + variant)."""

    variant: str
    status: str
    returncode: int | None
    duration_s: float
    run_dir: str
    root_cause: RootCauseInfo | None
    rank_logs: dict[str, dict[str, str]]


class Env(TypedDict, total=False):
    torch: str
    backend: str | None
    world_size: int
    python: str
    platform: str


class LabResult(TypedDict):
    lab: str
    params: dict[str, Any]
    world_size: int
    status: Status
    observations: dict[str, Any]
    checks: list[Check]
    duration_s: float
    env: Env
    error: ErrorInfo | None
    launches: list[LaunchInfo]
    out_dir: str


class ResultFormatError(ValueError):
    """A result.json whose content does not follow the contract."""


def torch_version() -> str:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "not installed"


def new_result(lab: str, params: dict[str, Any], world_size: int, out_dir: Path) -> LabResult:
    """A result with status `error` and nothing observed yet, filled in as the run goes."""
    return {
        "lab": lab,
        "params": dict(params),
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


def write_result(run_dir: Path, result: LabResult) -> Path:
    """Write result.json atomically (a new temp file renamed into place): a reader sees the old
    file or the new one, never half of one; whatever user code planted at that name (a FIFO, a
    symlink) is replaced, never opened."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / RESULT_FILE
    replace_file(path, json.dumps(result, indent=1, default=str).encode())
    return path


def parse_result(data: object) -> LabResult:
    """Check a decoded result.json against the contract; fill the optional fields' defaults."""
    if not isinstance(data, dict):
        raise ResultFormatError("result is not a JSON object")
    lab = data.get("lab")
    status = data.get("status")
    if not isinstance(lab, str) or not lab:
        raise ResultFormatError("result has no lab name")
    if status not in STATUSES:
        raise ResultFormatError(f"result status {status!r} is not one of {', '.join(STATUSES)}")
    for key, kind in (("params", dict), ("observations", dict), ("env", dict)):
        if not isinstance(data.get(key, {}), kind):
            raise ResultFormatError(f"result field {key!r} is not an object")
    checks = data.get("checks", [])
    if not isinstance(checks, list) or not all(_is_check(c) for c in checks):
        raise ResultFormatError("result checks are not a list of {name, passed, detail}")
    error = data.get("error")
    if error is not None and not isinstance(error, dict):
        raise ResultFormatError("result error is not an object")
    if error is not None and not isinstance(error.get("root_cause") or {}, dict):
        raise ResultFormatError("result error root_cause is not an object")
    world_size = data.get("world_size")
    duration = data.get("duration_s", 0.0)
    launches = data.get("launches", [])
    return cast(
        LabResult,
        {
            **data,
            "params": data.get("params", {}),
            "world_size": world_size
            if isinstance(world_size, int) and not isinstance(world_size, bool)
            else 0,
            "observations": data.get("observations", {}),
            "checks": [
                {
                    "name": c["name"],
                    "passed": c["passed"],
                    "detail": str(c.get("detail", "")),
                    **({"facts": c["facts"]} if isinstance(c.get("facts"), dict) else {}),
                }
                for c in checks
            ],
            "duration_s": float(duration)
            if isinstance(duration, int | float) and math.isfinite(duration)
            else 0.0,
            "env": data.get("env", {}),
            "error": error,
            "launches": [x for x in launches if isinstance(x, dict)]
            if isinstance(launches, list)
            else [],
            "out_dir": str(data.get("out_dir", "")),
        },
    )


def _is_check(item: object) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("name"), str)
        and isinstance(item.get("passed"), bool)
    )


def read_result(run_dir: Path) -> LabResult | None:
    """The run's result; None when result.json is missing, unreadable or off-contract."""
    try:
        return load_result_file(run_dir / RESULT_FILE)
    except ResultFormatError:
        return None


def load_result_file(path: Path) -> LabResult:
    """A result.json (or a copy of one, e.g. a cache entry); ResultFormatError when it is
    missing, unreadable, not a regular file (a FIFO, a device, a symlink: trainer_lab.files),
    larger than MAX_RESULT_BYTES, not JSON or off-contract."""
    try:
        return parse_result(json.loads(read_regular(path, MAX_RESULT_BYTES)))
    except ResultFormatError:
        raise
    except FileRefused as error:
        raise ResultFormatError(str(error)) from None
    except (OSError, ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise ResultFormatError(f"{path}: {type(error).__name__}: {error}") from None


def error_message(result: LabResult) -> str:
    """The run's error in one line ("" when it has none)."""
    error = result["error"]
    return str(error.get("message", "")) if error else ""


def root_cause_traceback(result: LabResult) -> str:
    error = result["error"]
    cause = error.get("root_cause") if error else None
    return str(cause.get("traceback") or "") if cause else ""


def ended_result(
    lab: str,
    params: dict[str, Any],
    world_size: int,
    out_dir: Path,
    status: Status,
    message: str,
    duration_s: float,
) -> LabResult:
    """A result for a run that ended without the driver's own result (cancelled before it could
    write one, past the hard deadline, crashed): nothing observed, the reason in error."""
    result = new_result(lab, params, world_size, out_dir)
    result["status"] = status
    result["error"] = {"message": message, "root_cause": None}
    result["duration_s"] = round(duration_s, 3)
    return result


def failed_checks(result: LabResult) -> list[Check]:
    return [c for c in result["checks"] if not c["passed"]]

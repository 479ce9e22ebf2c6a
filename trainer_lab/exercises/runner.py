"""Check a user's exercise file by running its checker (torch-free here).

    result = check_exercise(spec, Path("sync.py"), out_dir)

The file is copied into `out_dir/workspace` (edits made while the check runs do not race it) and
the exercise's checker runs there through trainer_lab.usercode.harness: the same deadline,
whole-tree kill, resource limits and hang stack dumps as the coding round. The verdict is a lab
result (trainer_lab.result) with lab `exercise:NAME` and one check per SPEC check, in SPEC order:
a check passes when every rank recorded it as passed; a check no rank reached fails with why the
run ended (the error in the user's file, the rank that hung and where).
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from trainer_lab.exercises.protocol import ENTRY_SCRIPT, ENTRY_SOURCE, checks_file
from trainer_lab.exercises.spec import ExerciseSpec
from trainer_lab.result import Check, LabResult
from trainer_lab.usercode.evidence import (
    crash_dumps,
    read_capped,
    read_jsonl,
    script_ended,
    where_stuck,
)
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, run_script
from trainer_lab.usercode.limits import LIMITS_TEXT
from trainer_lab.usercode.source import read_script, syntax_error
from trainer_lab.usercode.verdict import begin, check, finish, not_compiled, write_workspace


def lab_name(spec: ExerciseSpec) -> str:
    return f"exercise:{spec.name}"


def merge_checks(spec: ExerciseSpec, run: ScriptRun) -> tuple[list[Check], list[str]]:
    """(the SPEC's checks from every rank's records, the errors the ranks recorded)."""
    seen: dict[str, list[tuple[int, bool, str]]] = {}
    errors: list[str] = []
    for rank in run.ranks():
        refused: list[str] = []  # a FIFO, link or directory planted there: said, not waited on
        records = read_jsonl(run.run_dir / checks_file(rank), refused)
        errors.extend(f"rank {rank}: {reason}" for reason in refused)
        for record in records:
            if isinstance(record.get("error"), str):
                errors.append(f"rank {rank}: {record['error']}" if run.launch.world_size else
                              record["error"])  # fmt: skip
            elif isinstance(record.get("check"), str) and isinstance(record.get("passed"), bool):
                entry = (rank, record["passed"], str(record.get("detail", "")))
                seen.setdefault(record["check"], []).append(entry)
    why = errors[0] if errors else aborted_detail(spec, run) or run.summary()
    stopped = [] if run.status == "ok" else stopped_ranks(run)
    checks: list[Check] = []
    for name in spec.check_names():
        found = seen.get(name)
        if not found:
            checks.append(check(name, False, f"not reached: {why}"))
            continue
        missing = [r for r in stopped if r not in {f[0] for f in found}]
        if missing:  # a rank that failed or hung never judged this: no pass on the others' word
            where = f"rank {missing[0]}" if run.launch.world_size else "the run"
            checks.append(check(name, False, f"not reached on {where}: {why}"))
            continue
        failing = [f for f in found if not f[1]]
        rank, _, detail = failing[0] if failing else found[0]
        if failing and run.launch.world_size > 1:
            detail = f"rank {rank}: {detail}"
        checks.append(check(name, not failing, detail))
    return checks, errors


# gloo's words when a rank's collective met a peer's of another size ("564 vs 4. Received ...")
_SIZE_MISMATCH = re.compile(r"(\d+) vs (\d+)\. Received data size doesn't match expected size")


def aborted_detail(spec: ExerciseSpec, run: ScriptRun) -> str | None:
    """Why a rank was killed by SIGABRT, from its stderr and its faulthandler dump: where in the
    user's file it aborted and, when gloo said so, that two ranks' collectives paired up
    wrongly. None when no rank aborted (or nothing says more than the run's summary)."""
    summary = run.summary()
    if run.status != "error" or "SIGABRT" not in summary:
        return None
    for rank in run.ranks():
        dumps = crash_dumps(run.observe_dir, rank)
        if not dumps:
            continue
        where = where_stuck(dumps[0], Path(spec.file))
        text = f"{summary}: rank {rank} aborted" + (f" {where}" if where else "")
        tail, _ = read_capped(run.stderr_path(rank), 64 * 1024)
        sizes = _SIZE_MISMATCH.search(tail)
        if sizes is None:
            return text
        text += (
            f"; its collective met another rank's collective of another size (gloo received "
            f"{sizes[1]} bytes where {sizes[2]} were expected). Likely cause: the ranks' "
            "collectives pair up wrongly: one rank runs a collective the others do not run at "
            "that point"
        )
        if "algorithms/join.py" in dumps[0]:
            text += (
                ": here Join's own all-reduce (entering or leaving `with Join(...)`) met a "
                "gradient all-reduce of a rank still training outside any Join. Join shadows "
                "only the collectives of a loop that runs inside it: wrap the whole loop in "
                "`with Join([model]):`"
            )
        return text
    return None


def stopped_ranks(run: ScriptRun) -> list[int]:
    """Ranks that did not return from the script with status 0 (failed, killed or hung)."""
    stopped = []
    for rank in run.ranks():
        if script_ended(run.observe_dir, rank) != 0:
            stopped.append(rank)
    return stopped


def check_exercise(
    spec: ExerciseSpec,
    user_file: Path,
    out_dir: Path,
    cancel: threading.Event | None = None,
    timeout_s: float | None = None,
) -> LabResult:
    """Check the file; write and return out_dir/result.json's content. Raises ScriptError
    (trainer_lab.usercode.source) when the file cannot be read."""
    source = read_script(user_file)
    start = time.monotonic()
    result = begin(lab_name(spec), {"file": str(user_file)}, spec.world_size, out_dir)
    bad = syntax_error(source, spec.file)
    if bad:
        not_compiled(result, spec.check_names(), bad)
    else:
        workspace = out_dir / "workspace"
        write_workspace(workspace, {spec.file: source, ENTRY_SCRIPT: ENTRY_SOURCE})
        launch = ScriptLaunch(
            name=spec.name,
            script=workspace / ENTRY_SCRIPT,
            args=(spec.checker_module, spec.file),
            world_size=spec.world_size,
            run_dir=out_dir / "run",
            ckpt_dir=out_dir / "ckpt",
            timeout_s=timeout_s or spec.timeout_s,
        )
        run = run_script(launch, cancel)
        result["checks"], errors = merge_checks(spec, run)
        result["launches"] = [run.to_dict()]
        result["observations"] = {
            "run": run.summary(),
            "errors": errors,
            "hangs": {str(k): v for k, v in run.hangs.items()},
            "limits": LIMITS_TEXT,
        }
        if run.status == "cancelled":
            result["status"] = "cancelled"
    return finish(result, out_dir, start)

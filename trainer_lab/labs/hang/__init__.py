"""hang: what a stuck, mismatched, dead or late rank does to its peers, and how the root-cause
rank is found from every rank's logs (the first real error, not the peers' timeout noise).

Longer than the ~350-line guideline: four scenarios share one spec, and this lab keeps its own
per-rank verdicts (which rank hung, which timed out) on top of trainer_lab.root_cause."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.context import LabContext
from trainer_lab.launcher import LaunchResult
from trainer_lab.root_cause import rank_logs, torchrun_exit_codes, torchrun_root_cause_rank

TASK = "trainer_lab.labs.hang.worker:main"
SCENARIOS = ("skip", "mismatch", "dead-rank", "straggler")
FAULT_STEP = 2

SPEC = LabSpec(
    name="hang",
    group="failures",
    summary=(
        "One rank misbehaves at step 2 of a loop of all-reduces: skip (the others time out "
        "after the collective timeout), mismatch (TORCH_DISTRIBUTED_DEBUG=DETAIL names op and "
        "shape at once; without it a timeout), dead-rank (survivors fail fast), straggler "
        "(monitored_barrier names the late rank). The root-cause rank comes from all ranks' "
        "logs: the first real error, not the timeout messages."
    ),
    params=(
        ParamSpec("scenario", "choice", "skip", "what the victim rank does", choices=SCENARIOS),
        ParamSpec(
            "collective_timeout_s", "float", 3.0, "process-group timeout", minimum=1, maximum=60
        ),
        ParamSpec(
            "mismatch",
            "choice",
            "op",
            "mismatch scenario: op (victim broadcasts while peers all-reduce) or shape (victim "
            "all-reduces half the elements)",
            choices=("op", "shape"),
        ),
        ParamSpec(
            "death",
            "choice",
            "raise",
            "dead-rank scenario: raise (an exception with a traceback) or sigkill (as the OOM "
            "killer would: no traceback; the exit signal comes from torchrun's log); debug "
            "thread: the exception kills only a background thread and the process lives on "
            "without reaching the all-reduce, so the survivors wait out the collective timeout "
            "and survivors_fail_fast must fail",
            choices=("raise", "sigkill", "thread"),
        ),
        ParamSpec(
            "pg_timeout_s",
            "float",
            0.0,
            "debug: the process-group timeout the ranks really get, when not 0 (the checks "
            "still expect collective_timeout_s); e.g. 1 with collective_timeout_s 6: the skip "
            "scenario's peers fail far too early and peers_time_out must fail",
            minimum=0,
            maximum=60,
        ),
        ParamSpec(
            "detail",
            "bool",
            True,
            "debug: false runs the mismatch scenario's DETAIL launch without "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL, so its check must fail",
        ),
        ParamSpec(
            "plain_detail",
            "bool",
            False,
            "debug: true sets TORCH_DISTRIBUTED_DEBUG=DETAIL on the mismatch scenario's plain "
            "launch too, so its no-diagnosis check must fail",
        ),
        ParamSpec(
            "monitored",
            "bool",
            True,
            "debug: false makes the straggler scenario use a plain barrier (no names)",
        ),
        ParamSpec(
            "blame",
            "choice",
            "logs",
            "root-cause rule. logs: first real error across all ranks' logs, else the rank "
            "that never reached the collective; debug first_error: whichever rank raised "
            "first, timeouts included (the naive reading)",
            choices=("logs", "first_error"),
        ),
    ),
    observations=(
        ObservationSpec("scenario", "the scenario run"),
        ObservationSpec("victim", "the rank that misbehaved"),
        ObservationSpec("root_cause.rank", "root-cause rank found from all ranks' logs"),
        ObservationSpec("root_cause.kind", "exception | abort | signal | hang | mismatch | late"),
        ObservationSpec("root_cause.message", "the root-cause rank's first error line"),
        ObservationSpec("root_cause_is_victim", "the analysis named the victim (bool)"),
        ObservationSpec("launcher_root_cause_rank", "the launcher's own root-cause rank"),
        ObservationSpec(
            "torchrun_root_cause_rank",
            "the rank torchrun's report names as 'Root Cause (first observed failure)'",
        ),
        ObservationSpec(
            "seconds_to_failure", "survivors: entering the collective -> their error", "s"
        ),
        ObservationSpec("collective_timeout_s", "the process-group timeout", "s"),
        ObservationSpec("survivor_errors", "kind of error per surviving rank"),
        ObservationSpec("launch_duration_s", "wall time of the (last) launch", "s"),
        ObservationSpec("detail.seconds_to_failure", "mismatch with DETAIL: seconds to error", "s"),
        ObservationSpec("detail.names_op_and_shape", "the DETAIL error names OpType and shape"),
        ObservationSpec("plain.seconds_to_failure", "mismatch without DETAIL", "s"),
        ObservationSpec("plain.outcome", "mismatch without DETAIL: timeout | abort | error"),
        ObservationSpec("named_late_ranks", "ranks monitored_barrier named as late"),
    ),
    checks=(
        CheckSpec("peers_time_out", "skip: peers fail after about the collective timeout"),
        CheckSpec("detail_fails_fast", "mismatch: DETAIL gives an immediate error naming op/shape"),
        CheckSpec("plain_gives_no_diagnosis", "mismatch: without DETAIL a timeout or a crash"),
        CheckSpec("survivors_fail_fast", "dead-rank: survivors fail well before the timeout"),
        CheckSpec("names_late_rank", "straggler: monitored_barrier names the late rank"),
        CheckSpec("root_cause_is_victim", "the root cause found from the logs is the victim"),
    ),
    timeout_s=90.0,
)

_NAMED_RANKS = re.compile(r"Ranks? ([\d, ]+) failed to pass monitoredBarrier")
_WHAT = re.compile(r"what\(\):\s*(.*)")


def _error_kind(message: str) -> str:
    if "Detected mismatch between collectives" in message:
        return "mismatch"
    if _NAMED_RANKS.search(message):
        return "late"
    if "monitoredBarrier" in message:  # a rank that arrived, waiting on rank 0's verdict
        return "peer-gone"
    if re.search(r"connection (reset|closed)", message, re.IGNORECASE):
        return "peer-gone"
    if re.search(r"timed out|timeout", message, re.IGNORECASE):
        return "timeout"
    return "exception"


def rank_reports(run: LabContext, variant: str, result: LaunchResult) -> dict[int, dict[str, Any]]:
    """Per rank: its failure record (if any), else a native abort seen in its stderr, else a
    fatal signal from torchrun's report; and its last collective (from the events)."""
    events = run.events(variant)
    reports: dict[int, dict[str, Any]] = {}
    for rank in range(run.world_size):
        enters = [e for e in events.get(rank, []) if e["event"] == "enter"]
        last = enters[-1] if enters else None
        reports[rank] = {"last": last, "error": None, "time": None, "kind": None}
    for failure in result.failures:
        rank = failure["rank"]
        if reports.get(rank, {}).get("error") is None:
            message = f"{failure['type']}: {failure['message']}"
            reports[rank].update(error=message, time=failure["time"], kind=_error_kind(message))
    for rank, files in rank_logs(Path(result.run_dir)).items():
        if rank not in reports or reports[rank]["error"] is not None:
            continue
        text = _read(files["stderr"])
        if "terminate called" in text or "Fatal Python error" in text:
            what = _WHAT.search(text)
            line = what.group(1).strip() if what else "Fatal Python error: Aborted"
            last_time = reports[rank]["last"]["time"] if reports[rank]["last"] else None
            reports[rank].update(error=f"native abort: {line}", time=last_time, kind="abort")
    for rank, code in torchrun_exit_codes(Path(result.run_dir)).items():
        # Killed by a signal other than torchrun's own SIGTERM: a real cause with no traceback.
        if rank in reports and reports[rank]["error"] is None and code < 0 and code != -15:
            last_time = reports[rank]["last"]["time"] if reports[rank]["last"] else None
            message = f"killed by signal {-code} (no traceback; exit code from torchrun's log)"
            reports[rank].update(error=message, time=last_time, kind="signal")
    return reports


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _fingerprint(last: dict[str, Any] | None) -> tuple[Any, ...]:
    if last is None:
        return ("none",)
    return (last["step"], last["op"], tuple(last.get("shape", [])))


def find_root_cause(reports: dict[int, dict[str, Any]], blame: str) -> dict[str, Any]:
    """The first real error across ranks; if only timeout noise, the rank(s) that did not reach
    the collective the others were stuck in, or whose collective differs from the majority."""
    failed = sorted(
        (r for r, rep in reports.items() if rep["error"] is not None),
        key=lambda r: reports[r]["time"] or float("inf"),
    )
    if blame == "first_error" and failed:
        first = failed[0]
        return {"rank": first, "kind": reports[first]["kind"], "message": reports[first]["error"]}
    real = [r for r in failed if reports[r]["kind"] in ("exception", "abort", "signal")]
    if real:
        first = real[0]
        return {"rank": first, "kind": reports[first]["kind"], "message": reports[first]["error"]}
    late = [r for r in failed if reports[r]["kind"] == "late"]
    if late:
        named = _named_late(reports[late[0]]["error"])
        return {
            "rank": named[0] if len(named) == 1 else None,
            "kind": "late",
            "message": reports[late[0]]["error"],
            "candidates": named,
        }
    prints = {r: _fingerprint(rep["last"]) for r, rep in reports.items()}
    furthest = max((p[0] for p in prints.values() if p[0] != "none"), default=None)
    behind = [r for r, p in prints.items() if p[0] == "none" or p[0] != furthest]
    if behind:
        return {
            "rank": behind[0] if len(behind) == 1 else None,
            "kind": "hang",
            "message": f"rank(s) {behind} never entered the step-{furthest} collective",
            "candidates": behind,
        }
    counts = Counter(prints.values())
    top = max(counts.values())
    minority = [r for r, p in prints.items() if counts[p] < top]
    ties = [r for r, p in prints.items() if counts[p] == top] if len(counts) > 1 else []
    candidates = minority or (ties if len(ties) == len(prints) else [])
    if candidates:
        detail = ", ".join(f"rank {r}: {prints[r][1]}{list(prints[r][2])}" for r in sorted(prints))
        return {
            "rank": candidates[0] if len(candidates) == 1 else None,
            "kind": "mismatch",
            "message": f"ranks called different collectives at step {furthest}: {detail}",
            "candidates": candidates,
        }
    if failed:
        first = failed[0]
        return {"rank": first, "kind": reports[first]["kind"], "message": reports[first]["error"]}
    return {"rank": None, "kind": "unknown", "message": "no rank reported an error"}


def _named_late(message: str) -> list[int]:
    match = _NAMED_RANKS.search(message or "")
    if not match:
        return []
    return [int(x) for x in match.group(1).replace(" ", "").split(",") if x]


def seconds_to_failure(reports: dict[int, dict[str, Any]], ranks: list[int]) -> float | None:
    """Earliest (error time - time the rank entered its last collective) among `ranks`."""
    values = [
        reports[r]["time"] - reports[r]["last"]["time"]
        for r in ranks
        if reports[r]["time"] is not None and reports[r]["last"] is not None
    ]
    return round(min(values), 3) if values else None


def _launch(
    run: LabContext, variant: str, env: dict[str, str] | None
) -> tuple[LaunchResult, dict[int, dict[str, Any]]]:
    p = run.params
    spec = {
        "scenario": p["scenario"],
        "victim": run.world_size - 1,
        "fault_step": FAULT_STEP,
        "steps": FAULT_STEP + 3,
        "collective_timeout_s": p["pg_timeout_s"] or p["collective_timeout_s"],
        "mismatch": p["mismatch"],
        "death": p["death"],
        "monitored": p["monitored"],
        "barrier_timeout_s": p["collective_timeout_s"],
        "straggler_delay_s": 2 * p["collective_timeout_s"] + 1,
        "stuck_s": run.remaining_s(),
    }
    result = run.launch(TASK, spec, variant=variant, expect_failure=True, env=env)
    return result, rank_reports(run, variant, result)


def _record_root_cause(run: LabContext, root: dict[str, Any], result: LaunchResult) -> bool:
    victim = run.world_size - 1
    run.observe("root_cause.rank", root["rank"])
    run.observe("root_cause.kind", root["kind"])
    run.observe("root_cause.message", root["message"][:500])
    run.observe("launcher_root_cause_rank", result.root_cause.rank if result.root_cause else None)
    run.observe("torchrun_root_cause_rank", torchrun_root_cause_rank(result.run_dir))
    is_victim = root["rank"] == victim or (
        root["rank"] is None and victim in root.get("candidates", [])
    )
    run.observe("root_cause_is_victim", is_victim)
    shown = root["rank"] if root["rank"] is not None else f"one of {root.get('candidates')}"
    run.check(
        "root_cause_is_victim",
        is_victim,
        f"root cause rank {shown} ({root['kind']}: {root['message'][:160]}); victim was rank "
        f"{victim}",
    )
    return is_victim


def drive(run: LabContext) -> None:
    p = run.params
    scenario = p["scenario"]
    timeout = p["collective_timeout_s"]
    victim = run.world_size - 1
    survivors = [r for r in range(run.world_size) if r != victim]
    run.observe("scenario", scenario)
    run.observe("victim", victim)
    run.observe("collective_timeout_s", timeout)
    if scenario == "mismatch":
        run.plan(2)
        detail_env = {"TORCH_DISTRIBUTED_DEBUG": "DETAIL"} if p["detail"] else None
        _, d_reports = _launch(run, "detail", detail_env)
        plain_env = {"TORCH_DISTRIBUTED_DEBUG": "DETAIL"} if p["plain_detail"] else None
        plain, p_reports = _launch(run, "plain", plain_env)
        d_secs = seconds_to_failure(d_reports, list(range(run.world_size)))
        d_msgs = " ".join(rep["error"] or "" for rep in d_reports.values())
        op_name = "BROADCAST" if p["mismatch"] == "op" else "ALLREDUCE"
        names = f"OpType={op_name}" in d_msgs and "TensorShape=" in d_msgs
        run.observe("detail.seconds_to_failure", d_secs)
        run.observe("detail.names_op_and_shape", names)
        p_secs = seconds_to_failure(p_reports, list(range(run.world_size)))
        kinds = {rep["kind"] for rep in p_reports.values() if rep["kind"]}
        outcome = "abort" if "abort" in kinds else "timeout" if "timeout" in kinds else "error"
        run.observe("plain.seconds_to_failure", p_secs)
        run.observe("plain.outcome", outcome)
        run.observe("launch_duration_s", round(plain.duration_s, 3))
        run.check(
            "detail_fails_fast",
            names and d_secs is not None and d_secs < timeout / 2,
            f"with DETAIL: error after {d_secs} s (timeout {timeout:g} s), names op and shape: "
            f"{names}",
        )
        plain_named = any("Detected mismatch" in (rep["error"] or "") for rep in p_reports.values())
        run.check(
            "plain_gives_no_diagnosis",
            not plain_named and outcome in ("timeout", "abort"),
            f"without DETAIL: {outcome} after {p_secs} s; no rank named the mismatch",
        )
        # DETAIL's own message names both sides; the logs-based rule uses the plain launch.
        _record_root_cause(run, find_root_cause(p_reports, p["blame"]), plain)
        return
    run.plan(1)
    result, reports = _launch(run, scenario, None)
    run.observe("launch_duration_s", round(result.duration_s, 3))
    run.observe("survivor_errors", {str(r): reports[r]["kind"] or "terminated" for r in survivors})
    secs = seconds_to_failure(reports, survivors if scenario != "straggler" else [0])
    run.observe("seconds_to_failure", secs)
    root = find_root_cause(reports, p["blame"])
    if scenario == "skip":
        timed_out = [r for r in survivors if reports[r]["kind"] == "timeout"]
        run.check(
            "peers_time_out",
            bool(timed_out) and secs is not None and 0.8 * timeout <= secs <= timeout + 10,
            f"ranks {timed_out} timed out {secs} s after entering the all-reduce "
            f"(collective timeout {timeout:g} s)",
        )
    elif scenario == "dead-rank":
        gone = [r for r in survivors if reports[r]["kind"] in ("peer-gone", None)]
        ends = {r: reports[r]["kind"] or "terminated by torchrun" for r in survivors}
        run.check(
            "survivors_fail_fast",
            len(gone) == len(survivors) and (secs is None or secs < timeout),
            f"survivors: {ends}, first error {secs} s after entering the all-reduce "
            f"(timeout {timeout:g} s)",
        )
    elif scenario == "straggler":
        named = _named_late(reports[0]["error"] or "")
        run.observe("named_late_ranks", named)
        run.check(
            "names_late_rank",
            named == [victim],
            f"rank 0's error: {(reports[0]['error'] or 'none')[:160]}; late rank was {victim}",
        )
    _record_root_cause(run, root, result)

"""hang lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainer_lab.context import LabContext
from trainer_lab.launcher import LaunchResult
from trainer_lab.root_cause import (
    RankReport,
    named_late_ranks,
    rank_reports,
    root_cause_from_reports,
    seconds_to_failure,
    torchrun_root_cause_rank,
)

TASK = "trainer_lab.labs.hang.worker:main"
FAULT_STEP = 2
HEARTBEAT_S = 0.2


def _launch(
    run: LabContext, variant: str, env: dict[str, str] | None
) -> tuple[LaunchResult, dict[int, RankReport]]:
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
        "heartbeat_s": HEARTBEAT_S if p["scenario"] == "skip" else 0,
    }
    result = run.launch(TASK, spec, variant=variant, expect_failure=True, env=env)
    reports = rank_reports(
        Path(result.run_dir), result.failures, run.events(variant), run.world_size
    )
    return result, reports


def _record_root_cause(run: LabContext, root: dict[str, Any], result: LaunchResult) -> bool:
    victim = run.world_size - 1
    run.observe("root_cause.rank", root["rank"])
    run.observe("root_cause.kind", root["kind"])
    run.observe("root_cause.message", root["message"][:500])
    run.observe("launcher_root_cause_rank", result.root_cause.rank if result.root_cause else None)
    torchrun_rank = torchrun_root_cause_rank(result.run_dir)
    run.observe("torchrun_root_cause_rank", torchrun_rank)
    run.observe(
        "torchrun_blames_victim", None if torchrun_rank is None else torchrun_rank == victim
    )
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


def _observe_stall(
    run: LabContext, events: dict[int, list[dict[str, Any]]], survivors: list[int]
) -> None:
    """While the survivors wait in the step-K all-reduce: their heartbeats against their steps."""
    beats = done = 0
    for rank in survivors:
        entered = [
            e["time"]
            for e in events.get(rank, [])
            if e["event"] == "enter" and e.get("step") == FAULT_STEP
        ]
        if not entered:
            continue
        after = [e for e in events[rank] if e["time"] > entered[0]]
        beats += sum(1 for e in after if e["event"] == "heartbeat")
        done += sum(1 for e in after if e["event"] == "done")
    run.observe("stall.heartbeats", beats)
    run.observe("stall.steps_done", done)


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
        _record_root_cause(run, root_cause_from_reports(p_reports, p["blame"]), plain)
        return
    run.plan(1)
    result, reports = _launch(run, scenario, None)
    run.observe("launch_duration_s", round(result.duration_s, 3))
    run.observe("survivor_errors", {str(r): reports[r]["kind"] or "terminated" for r in survivors})
    secs = seconds_to_failure(reports, survivors if scenario != "straggler" else [0])
    run.observe("seconds_to_failure", secs)
    root = root_cause_from_reports(reports, p["blame"])
    if scenario == "skip":
        _observe_stall(run, run.events(scenario), survivors)
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
        named = named_late_ranks(reports[0]["error"] or "")
        run.observe("named_late_ranks", named)
        run.check(
            "names_late_rank",
            named == [victim],
            f"rank 0's error: {(reports[0]['error'] or 'none')[:160]}; late rank was {victim}",
        )
    _record_root_cause(run, root, result)

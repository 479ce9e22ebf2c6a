"""replica-recovery lab: the driver (torch-free). One launch runs both modes; this reads the
supervisors', the lighthouse's and every replica process's events, and rank 0's weight report."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from trainer_lab.context import LabContext, LabError
from trainer_lab.events import read_events
from trainer_lab.result import events_file

QUORUM_TIMEOUT_S = 60  # a replica waits this long for its quorum answer
# the quorum groups' gloo timeout: a peer of the dead replica errors at once ("Connection closed
# by peer"); with 4+ replicas one that only waits on another survivor in the ring learns it from
# this timeout (gloo's abort does not close the group's connections)
GROUP_TIMEOUT_S = 10  # generous: a live replica starved on a loaded machine must not time out
SUPERVISOR_TIMEOUT_S = 60  # the supervisors' own group (torchrun's): barriers between the modes
JOIN_TIMEOUT_S = 30  # the lighthouse waits this long for a spare it asked for


def replica_events(run_dir: Path, mode: str) -> dict[tuple[int, int], list[dict[str, Any]]]:
    """(replica id, incarnation) -> that process's events."""
    found = {}
    for folder in (run_dir / "replicas" / mode).glob("r*-i*"):
        rid, _, inc = folder.name[1:].partition("-i")
        if rid.isdigit() and inc.isdigit():
            found[(int(rid), int(inc))] = read_events(folder / events_file(int(rid)))
    return dict(sorted(found.items()))


def short_error(message: str) -> str:
    """gloo's message without its source location and peer address: 'Connection closed by
    peer', 'Timed out waiting ...'."""
    text = re.sub(r"^\[[^\]]*\]\s*", "", message)
    return re.split(r" \[|\. ", text, maxsplit=1)[0][:120]


def _of(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in records if e["event"] == kind]


def summarise_mode(
    events: dict[tuple[int, int], list[dict[str, Any]]],
    supervisor: list[dict[str, Any]],
    quorums: list[dict[str, Any]],
    replicas: int,
) -> dict[str, Any]:
    """What one mode did, from the events alone (no weights)."""
    survivors = range(replicas - 1)
    incs = Counter(rid for rid, _ in events)
    zero = [e for (rid, _), records in events.items() if rid == 0 for e in _of(records, "step")]
    commits = Counter(e["step"] for e in zero)
    errors = sorted(
        (
            e
            for (rid, _), records in events.items()
            if rid in survivors
            for e in _of(records, "collective_error")
        ),
        key=lambda e: e["time"],
    )
    finals = [
        max((e["step"] for e in _of(records, "step")), default=0)
        for (rid, inc), records in events.items()
        if inc == incs[rid] - 1 and _of(records, "exit")
    ]
    killed = [e for e in supervisor if e["event"] == "killed"]
    recovered = [e for records in events.values() for e in _of(records, "recovered")]
    sent = [e for records in events.values() for e in _of(records, "sent_state")]
    join = recovered[-1] if recovered else None
    peer = [e for e in sent if join and e["step"] == join["step"]]
    same = None
    if join is not None:
        same = bool(peer) and all(
            join[k] == peer[-1][k] for k in ("params_digest", "momentum_digest")
        )
    mismatches = None
    if join is not None:
        digests: dict[int, dict[int, str]] = {}
        for (rid, _), records in events.items():  # later incarnations override
            for e in _of(records, "step"):
                digests.setdefault(e["step"], {})[rid] = e["params_digest"]
        mismatches = sum(
            1
            for step, by_rid in digests.items()
            if step > join["step"] and len(set(by_rid.values())) > 1
        )
    return {
        "survivor_pid_changes": sum(incs[rid] - 1 for rid in survivors),
        "steps_redone": sum(1 for n in commits.values() if n > 1),
        "final_step": min(finals) if len(finals) == replicas else None,
        "failed_step": errors[0]["step"] if errors else None,
        "error_message": short_error(errors[0]["message"]) if errors else None,
        "_errors": errors,
        "_zero_steps": zero,
        "_killed_at": killed[0]["time"] if killed else None,
        "_quorums": quorums,
        "_recovery_bytes": join["bytes"] if join else None,
        "_same_digests": same,
        "_digest_mismatch_steps": mismatches,
    }


def _by_step(steps: list[dict[str, Any]], step: int | None, key: str) -> Any:
    found = [e[key] for e in steps if e["step"] == step]
    return found[-1] if found else None


def drive(run: LabContext) -> None:
    p = run.params
    replicas = run.world_size
    if p["kill_after_step"] + p["shrunk_steps"] >= p["steps"]:
        raise LabError(
            f"kill_after_step {p['kill_after_step']} + shrunk_steps {p['shrunk_steps']} must be "
            f"below steps {p['steps']} (the replacement must train at least one step)"
        )
    run.plan(1)
    spec = {
        **p,
        "collective_timeout_s": SUPERVISOR_TIMEOUT_S,
        "group_timeout_s": GROUP_TIMEOUT_S,
        "quorum_timeout_s": QUORUM_TIMEOUT_S,
        "join_timeout_s": JOIN_TIMEOUT_S,
        "mode_timeout_s": max(10.0, run.remaining_s() / 2 - 5),
    }
    run.launch("trainer_lab.labs.replica_recovery.worker:main", spec)
    report = run.report("replica_recovery")
    supervisor = [e for records in run.events().values() for e in records]
    run.observe("replicas", replicas)
    modes = {}
    for mode in ("live", "restart"):
        quorums = [
            e
            for e in read_events(run.out_dir / "lighthouse" / mode / events_file(0))
            if e["event"] == "quorum"
        ]
        mine = [e for e in supervisor if e.get("mode") == mode]
        modes[mode] = summarise_mode(replica_events(run.out_dir, mode), mine, quorums, replicas)
        for key, value in modes[mode].items():
            if not key.startswith("_"):
                run.observe(f"{mode}.{key}", value)
    live, restart = modes["live"], modes["restart"]
    _observe_live(run, live, replicas, report)
    _observe_restart(run, restart, replica_events(run.out_dir, "restart"), replicas)
    _check(run, live, replicas, report)


def _observe_live(
    run: LabContext, live: dict[str, Any], replicas: int, report: dict[str, Any]
) -> None:
    p = run.params
    zero, quorums = live["_zero_steps"], live["_quorums"]
    sizes = [len(q["members"]) for q in quorums]
    run.observe("live.retried_allreduces", sum(1 for e in live["_errors"]))
    run.observe(
        "live.buffer_changed_by_failed_allreduce",
        any(e["buffer_changed"] for e in live["_errors"]) if live["_errors"] else None,
    )
    shrunk = [q for q in quorums if len(q["members"]) < replicas]
    killed = live["_killed_at"]
    run.observe(
        "live.detect_s",
        round(shrunk[0]["time"] - killed, 3) if shrunk and killed is not None else None,
    )
    run.observe("live.quorum.sizes", sizes)
    run.observe("live.quorum.epochs", len(quorums))
    run.observe("live.quorum.min_size", min(sizes) if sizes else None)
    run.observe("live.quorum.final_size", sizes[-1] if sizes else None)
    at = {
        "before": p["kill_after_step"],
        "shrunk": p["kill_after_step"] + 1,
        "after": p["steps"],
    }
    for name, step in at.items():
        run.observe(f"live.global_batch.{name}", _by_step(zero, step, "global_batch"))
        run.observe(f"live.divisor.{name}", _by_step(zero, step, "divisor"))
    join = report.get("join") or {}
    run.observe("live.recovery.step", join.get("step"))
    run.observe("live.recovery.src", join.get("src"))
    run.observe("live.recovery.bytes", live.get("_recovery_bytes"))
    run.observe("live.recovery.same_digests", live.get("_same_digests"))
    run.observe("live.replacement.params_max_abs_diff", join.get("params_max_abs_diff"))
    run.observe("live.replacement.momentum_max_abs_diff", join.get("momentum_max_abs_diff"))
    lockstep = report.get("lockstep") or {}
    run.observe("live.lockstep.max_abs_diff", lockstep.get("max_abs_diff"))
    run.observe("live.lockstep.digest_mismatch_steps", live.get("_digest_mismatch_steps"))
    reference = report["reference"]
    run.observe("live.reference.max_abs_diff_to_join", reference["max_abs_diff_to_join"])
    run.observe("live.reference.max_abs_diff_after_join", reference["max_abs_diff_after_join"])


def _observe_restart(
    run: LabContext,
    restart: dict[str, Any],
    events: dict[tuple[int, int], list[dict[str, Any]]],
    replicas: int,
) -> None:
    loads = [
        e
        for (_, inc), records in events.items()
        if inc > 0
        for e in _of(records, "loaded_checkpoint")
    ]
    run.observe("restart.restarted_processes", sum(1 for (_, inc) in events if inc > 0))
    run.observe("restart.resumed_from_step", min((e["step"] for e in loads), default=None))
    run.observe("restart.checkpoint_bytes", max((e["bytes"] for e in loads), default=None))
    quorums = restart["_quorums"]
    killed = restart["_killed_at"]
    full = [q for q in quorums if q["epoch"] > 0 and len(q["members"]) == replicas]
    run.observe(
        "restart.detect_s",
        round(full[0]["time"] - killed, 3) if full and killed is not None else None,
    )


def _check(run: LabContext, live: dict[str, Any], replicas: int, report: dict[str, Any]) -> None:
    p = run.params
    failed = p["kill_after_step"] + 1
    survivors = replicas - 1
    retried = [e for e in live["_errors"] if e["step"] == failed]
    zero = live["_zero_steps"]
    committed_after = _by_step(zero, failed, "retried")
    sizes = [len(q["members"]) for q in live["_quorums"]]
    run.check(
        "survivors_kept_training",
        live["survivor_pid_changes"] == 0
        and live["steps_redone"] == 0
        and len(retried) == survivors
        and committed_after is True
        and survivors in sizes
        and live["final_step"] == p["steps"],
        f"survivor processes replaced: {live['survivor_pid_changes']}; steps redone: "
        f"{live['steps_redone']}; collective errors in step {failed}: {len(retried)} of "
        f"{survivors} survivors, step {failed} committed after a retry: {committed_after}; "
        f"quorum sizes {sizes}; final step {live['final_step']} of {p['steps']}",
    )
    reference = report["reference"]
    diff = reference["max_abs_diff_to_join"]
    run.check(
        "gradient_average_over_live_replicas",
        diff is not None and diff <= p["tolerance"] and survivors in sizes,
        f"survivor vs the one-process replay (mean over each step's live replicas) at "
        f"{reference['steps_to_join']} steps up to the join: max abs diff {diff!r} "
        f"(tolerance {p['tolerance']:g}); divisor in the shrunk step "
        f"{_by_step(zero, failed, 'divisor')} for {survivors} live replica(s)",
    )
    join = report.get("join")
    same = live.get("_same_digests")
    run.check(
        "replacement_matches_peer",
        join is not None
        and join["params_max_abs_diff"] == 0
        and join["momentum_max_abs_diff"] == 0
        and same is True,
        "no replacement joined"
        if join is None
        else f"replacement (replica {join['rid']}) at step {join['step']} vs replica "
        f"{join['src']}: weights max abs diff {join['params_max_abs_diff']!r}, momentum "
        f"{join['momentum_max_abs_diff']!r}; digests equal: {same}",
    )
    lockstep = report.get("lockstep") or {}
    mismatches = live.get("_digest_mismatch_steps")
    run.check(
        "replicas_in_lockstep_after_join",
        lockstep.get("max_abs_diff") == 0
        and mismatches == 0
        and bool(sizes)
        and sizes[-1] == replicas
        and live["final_step"] == p["steps"],
        f"after the join: max abs weight diff across replicas {lockstep.get('max_abs_diff')!r} "
        f"over {lockstep.get('comparisons')} comparisons, {mismatches} step(s) with differing "
        f"digests; last quorum {sizes[-1] if sizes else None} of {replicas}",
    )

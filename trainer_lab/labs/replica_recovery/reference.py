"""replica-recovery weight comparisons (imports torch; rank 0, after both modes):

- reference: the live run replayed in one process. Step s averages the gradients of the replicas
  that committed it (their batches are functions of (step, replica id)) and divides by how many
  they were; the survivors' weights are compared with it step by step, up to the join and after.
- join: the replacement's weights and momentum right after recovery against its source peer's
  at the same step.
- lockstep: after the join, every replica's weights against replica 0's, step by step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from trainer_lab.events import read_events
from trainer_lab.labs.replica_recovery.replica import batch, build, local_grad, params_of, set_grads
from trainer_lab.result import events_file

Trajectory = dict[int, tuple[torch.Tensor, torch.Tensor]]


def incarnations(run_dir: Path, mode: str) -> dict[tuple[int, int], Path]:
    """(replica id, incarnation) -> its folder (r<rid>-i<inc>)."""
    found = {}
    for folder in (run_dir / "replicas" / mode).glob("r*-i*"):
        rid, _, inc = folder.name[1:].partition("-i")
        if rid.isdigit() and inc.isdigit():
            found[(int(rid), int(inc))] = folder
    return dict(sorted(found.items()))


def replica_events(run_dir: Path, mode: str) -> dict[tuple[int, int], list[dict[str, Any]]]:
    return {
        key: read_events(folder / events_file(key[0]))
        for key, folder in incarnations(run_dir, mode).items()
    }


def trajectories(run_dir: Path, mode: str) -> dict[int, Trajectory]:
    """Each replica id's committed states, later incarnations overriding earlier ones."""
    merged: dict[int, Trajectory] = {}
    for (rid, _), folder in incarnations(run_dir, mode).items():
        path = folder / "trajectory.pt"
        if not path.is_file():
            continue
        saved = torch.load(path)
        for i, step in enumerate(saved["steps"]):
            merged.setdefault(rid, {})[step] = (saved["params"][i], saved["momentum"][i])
    return merged


def members_by_step(events: dict[tuple[int, int], list[dict[str, Any]]]) -> dict[int, list[int]]:
    """Who committed each step, from replica 0's step events (a redone step: the last commit)."""
    members: dict[int, list[int]] = {}
    for (rid, _), records in events.items():
        if rid == 0:
            for e in records:
                if e["event"] == "step":
                    members[e["step"]] = e["members"]
    return members


def replay(
    spec: dict[str, Any], members: dict[int, list[int]], device: torch.device
) -> dict[int, torch.Tensor]:
    """The reference: one model, step s = mean of its members' gradients (summed in id order),
    on the replicas' device type."""
    model, opt = build(spec, device)
    weights = {0: params_of(model)}
    for step in range(1, max(members, default=0) + 1):
        if step not in members:
            break
        total: torch.Tensor | None = None
        for rid in members[step]:
            _, grad = local_grad(model, *batch(spec, step, rid))
            total = grad if total is None else total + grad
        assert total is not None
        set_grads(model, total / len(members[step]))
        opt.step()
        weights[step] = params_of(model)
    return weights


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


def analyse(run_dir: Path, spec: dict[str, Any], device: torch.device) -> dict[str, Any]:
    events = replica_events(run_dir, "live")
    states = trajectories(run_dir, "live")
    members = members_by_step(events)
    reference = replay(spec, members, device)
    recovered = [e for records in events.values() for e in records if e["event"] == "recovered"]
    join = recovered[-1] if recovered else None
    join_step = join["step"] if join else None
    survivor = states.get(0, {})
    before, after = [], []
    for step, (params, _) in sorted(survivor.items()):
        if step in reference:
            diff = _max_diff(params, reference[step])
            (before if join_step is None or step <= join_step else after).append(diff)
    out: dict[str, Any] = {
        "reference": {
            "steps_to_join": len(before),
            "max_abs_diff_to_join": max(before) if before else None,
            "max_abs_diff_after_join": max(after) if after else None,
        },
        "join": None,
        "lockstep": None,
    }
    if join is None:
        return out
    joiner = next(rid for (rid, _), records in events.items() if join in records)
    mine, peer = states.get(joiner, {}), states.get(join["src"], {})
    if join_step in mine and join_step in peer:
        out["join"] = {
            "rid": joiner,
            "src": join["src"],
            "step": join_step,
            "params_max_abs_diff": _max_diff(mine[join_step][0], peer[join_step][0]),
            "momentum_max_abs_diff": _max_diff(mine[join_step][1], peer[join_step][1]),
        }
    diffs = []
    for step in sorted(s for s in members if s > join_step):
        for rid in members[step]:
            if rid != 0 and step in states.get(rid, {}) and step in survivor:
                diffs.append(_max_diff(states[rid][step][0], survivor[step][0]))
    out["lockstep"] = {"comparisons": len(diffs), "max_abs_diff": max(diffs) if diffs else None}
    return out

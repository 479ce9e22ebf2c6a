"""Printed losses against the losses trained on (torch-free), for every round.

The harness records the value of every scalar a rank's backward pass starts from
(usercode/token_remap.record_backward_losses: the loss it trained on). A printed loss is honest
when one reading of those scalars gives it at every step: their sum, their mean over the step's
backward passes, the last one, a mean per sample... which reading is the round's (families, a
name and a value per step). A curve printed beside the training (a made-up decay, a rescaled
real loss) fits none of them at every step.

A loss scaler multiplies the loss before backward by a power of two that changes during a run
(GradScaler: 2^16, halved on an overflow): where a round allows one, a step's scalar may be the
printed reading times 2^j (0 <= j <= LOSS_SCALE_BITS), j per step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from trainer_lab.usercode import protocol
from trainer_lab.usercode.dataplan import global_batches
from trainer_lab.usercode.evidence import read_jsonl
from trainer_lab.usercode.harness import ScriptRun

RELATIVE, ABSOLUTE = 1e-3, 1e-4  # a printed value rounded to 4 decimals still matches
LOSS_SCALE_BITS = 24

Families = Mapping[str, Mapping[int, float]]  # reading -> step -> the printed loss it gives


def backward_losses(run: ScriptRun, steps: int) -> dict[int, list[float]]:
    """Step -> the scalars every rank's backward passes of that step began from, rank by rank
    in order (a backward after c optimizer steps belongs to step c + 1); {} when none."""
    found: dict[int, list[float]] = {}
    for rank in run.ranks():
        for record in read_jsonl(run.observe_dir / protocol.losses_file(rank)):
            done, value = record.get("pstep"), record.get("loss")
            if isinstance(done, int) and isinstance(value, int | float) and 0 <= done < steps:
                found.setdefault(done + 1, []).append(float(value))
    return found


def close(printed: float, expected: float) -> bool:
    return abs(printed - expected) <= RELATIVE * abs(printed) + ABSOLUTE


def _fits(printed: float, expected: float, loss_scale: bool) -> bool:
    if close(printed, expected):
        return True
    return loss_scale and any(
        close(printed * 2.0**j, expected) for j in range(1, LOSS_SCALE_BITS + 1)
    )


def first_unmatched(
    printed: Mapping[int, float], families: Families, loss_scale: bool = False
) -> int | None:
    """None when one reading fits every step it and the printed lines both have (or there is
    no such step); else the step to quote: the first no reading fits, or the first step when
    each reading fits some steps but none fits them all."""
    steps = sorted({s for values in families.values() for s in values} & set(printed))
    if not steps:
        return None
    for values in families.values():
        if all(s in values and _fits(printed[s], values[s], loss_scale) for s in steps):
            return None
    for s in steps:
        if not any(s in v and _fits(printed[s], v[s], loss_scale) for v in families.values()):
            return s
    return steps[0]


def readings(families: Families, step: int) -> str:
    """'name value, name value' of every reading at `step`."""
    return ", ".join(f"{name} {v[step]:.4g}" for name, v in families.items() if step in v)


def one_process_families(run: ScriptRun, steps: int) -> dict[str, dict[int, float]]:
    """The readings of a one-process run's backward scalars (the DDP round's skeleton): their
    sum, their mean, their sum times their count (micro-batches scaled by 1/k, printed summed),
    the last one, the last times their count, and their sum per sample read for the step."""
    losses = backward_losses(run, steps)
    samples = {s: len(ids) for s, ids in global_batches(run.observe_dir, 1).items()}
    out: dict[str, dict[int, float]] = {
        "their sum": {},
        "their mean": {},
        "their sum x their count": {},
        "the last": {},
        "the last x their count": {},
        "their sum / the samples read": {},
    }
    for s, values in losses.items():
        total, k = sum(values), len(values)
        out["their sum"][s] = total
        out["their mean"][s] = total / k
        out["their sum x their count"][s] = total * k
        out["the last"][s] = values[-1]
        out["the last x their count"][s] = values[-1] * k
        if samples.get(s):
            out["their sum / the samples read"][s] = total / samples[s]
    return out


def one_process_problem(run: ScriptRun, printed: Mapping[int, float], steps: int) -> str | None:
    """Why a one-process run's printed losses are not the losses it trained on; None when one
    reading of its backward scalars fits every step (a loss scaler's power of two aside)."""
    families = one_process_families(run, steps)
    first = first_unmatched(printed, families, loss_scale=True)
    if first is None:
        return None
    return (
        f"the printed losses are not the losses trained on: step {first} printed "
        f"{printed[first]:.4g}, its backward passes began from ({readings(families, first)}); "
        "likely cause: the printed loss is made up, rescaled per step or smoothed, not the "
        "step's own"
    )


def loss_falls_as_trained(
    run: ScriptRun, lines: Sequence[Mapping[str, Any]], steps: int
) -> tuple[bool, str, dict[str, float]]:
    """The one-process run's printed losses (its step lines) fall, from the mean of the first
    quarter of the steps to the last quarter's, and are the losses it trained on: ok, detail,
    facts (loss_first, loss_last)."""
    losses = [float(line["loss"]) for line in lines]
    if len(losses) < 4 or not all(math.isfinite(x) for x in losses):
        return False, f"need at least 4 finite losses, got {len(losses)}: {losses[:4]}", {}
    k = max(1, len(losses) // 4)
    first, last = sum(losses[:k]) / k, sum(losses[-k:]) / k
    ok = last < first
    detail = f"loss {first:.4g} -> {last:.4g} (mean of the first and last {k} steps)"
    if not ok:
        detail += "; expected it to fall; likely cause: no learning (learning rate, loss)"
    why = one_process_problem(run, {line["step"]: float(line["loss"]) for line in lines}, steps)
    if why is not None:
        ok, detail = False, f"{detail}; {why}"
    return ok, detail, {"loss_first": first, "loss_last": last}

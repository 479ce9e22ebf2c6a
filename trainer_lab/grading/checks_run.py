"""Checks of the skeleton, distributed and monitoring phases, from what the runs did.

Each function takes the finished runs (trainer_lab.usercode.harness.ScriptRun) and returns lab
checks ({name, passed, detail}); the detail is the evidence a user reads.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

from trainer_lab.grading.contract import DATASET_SIZE
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import fetches, read_capped, step_lines, step_records
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

EXIT_ABORT = "terminate called without an active exception"


def failed_run_detail(run: ScriptRun) -> str:
    """Why a run did not finish, with the last stderr line when no rank recorded an error."""
    text = run.summary()
    if run.status == "error" and "SIGABRT" in text:
        for rank in run.ranks():
            tail, _ = read_capped(run.stderr_path(rank), 64 * 1024)
            if EXIT_ABORT in tail:
                return (
                    f"{text}: rank {rank} aborted ({EXIT_ABORT}); destroying the process group "
                    "while a peer's last collective is in flight does that: barrier first"
                )
    if run.status == "error" and (run.root_cause is None or run.root_cause.kind != "exception"):
        tail, _ = read_capped(run.stderr_path(0), 64 * 1024)
        last = [line for line in tail.splitlines() if line.strip()][-1:]
        if last:
            text += f"; stderr: {last[0][:200]}"
    return text


def _ids_preview(ids: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(i) for i in ids[:limit])
    return f"[{shown}{', ...' if len(ids) > limit else ''}]"


# -- skeleton --------------------------------------------------------------------------------


def skeleton_checks(run: ScriptRun) -> list[Check]:
    lines = step_lines(run.stdout_path(0))
    checks = [check("skeleton.exits", run.status == "ok", failed_run_detail(run))]

    if lines.bad:
        number, text = lines.bad[0]
        ok, detail = False, f"stdout line {number} is not a step line: {text}"
    elif not lines.lines:
        ok, detail = False, f"no JSON step lines on stdout ({lines.other} other lines)"
    else:
        steps = [line["step"] for line in lines.lines]
        ok = all(b > a for a, b in itertools.pairwise(steps))
        detail = f"{len(steps)} step lines parse (steps {steps[0]}..{steps[-1]})"
        if not ok:
            detail = f"steps do not increase: {_ids_preview(steps)}"
    if lines.capped:
        detail += " (output capped at 2 MiB)"
    checks.append(check("skeleton.json_lines", ok, detail))

    losses = [float(line["loss"]) for line in lines.lines]
    if len(losses) < 4 or not all(math.isfinite(x) for x in losses):
        ok, detail = False, f"need at least 4 finite losses, got {len(losses)}: {losses[:4]}"
    else:
        k = max(1, len(losses) // 4)
        first, last = sum(losses[:k]) / k, sum(losses[-k:]) / k
        ok = last < first
        detail = f"loss {first:.4g} -> {last:.4g} (mean of the first and last {k} steps)"
    checks.append(check("skeleton.loss_falls", ok, detail))
    return checks


# -- distributed -----------------------------------------------------------------------------


def _epochs(run: ScriptRun) -> tuple[list[list[list[int]]], str]:
    """Per complete epoch, per rank, the ids in fetch order (an epoch = DATASET_SIZE / W ids
    per rank)."""
    world = run.launch.world_size
    per_rank = math.ceil(DATASET_SIZE / world)
    seqs = [[i for _, i in fetches(run.observe_dir, rank)] for rank in run.ranks()]
    complete = min(len(s) for s in seqs) // per_rank
    epochs = [[s[e * per_rank : (e + 1) * per_rank] for s in seqs] for e in range(complete)]
    counts = ", ".join(f"rank {r}: {len(s)}" for r, s in enumerate(seqs))
    return epochs, f"ids fetched {counts}"


def exactly_once(run: ScriptRun) -> tuple[bool, str]:
    epochs, counts = _epochs(run)
    if not epochs:
        return False, f"fewer than one epoch fetched ({counts})"
    for e, chunks in enumerate(epochs):
        seen = Counter(i for chunk in chunks for i in chunk)
        missing = sorted(set(range(DATASET_SIZE)) - set(seen))
        twice = sorted(i for i, n in seen.items() if n > 1)
        if missing or twice:
            owners = {}
            for rank, chunk in enumerate(chunks):
                for i in chunk:
                    owners.setdefault(i, []).append(rank)
            example = ""
            if twice:
                example = f"; id {twice[0]} went to ranks {owners[twice[0]]}"
            return False, (
                f"epoch {e}: {len(twice)} ids fetched more than once, {len(missing)} never{example}"
            )
    return True, f"{len(epochs)} epochs, each id exactly once across ranks"


def new_order(run: ScriptRun) -> tuple[bool, str]:
    epochs, counts = _epochs(run)
    if len(epochs) < 2:
        return False, f"fewer than two epochs fetched ({counts})"
    for e in range(len(epochs) - 1):
        if epochs[e] == epochs[e + 1]:
            return False, (
                f"epochs {e} and {e + 1} fetched the same order on every rank "
                f"(rank 0: {_ids_preview(epochs[e][0])}); set_epoch before each epoch?"
            )
    return True, f"{len(epochs)} epochs, each in a new order"


def params_in_sync(run: ScriptRun) -> tuple[bool, str]:
    records = {rank: step_records(run.observe_dir, rank) for rank in run.ranks()}
    counts = {rank: len(r) for rank, r in records.items()}
    if not all(counts.values()):
        return False, f"optimizer steps seen per rank: {counts}"
    if records[0][0]["post"].get("sharded"):
        if len(set(counts.values())) > 1:
            return False, f"ranks made different numbers of optimizer steps: {counts}"
        return True, (
            f"{counts[0]} steps on {len(counts)} ranks; the parameters are sharded (DTensor), "
            "so each rank holds its own shard and the digests are not compared across ranks"
        )
    for i, base in enumerate(records[0]):
        for rank in run.ranks()[1:]:
            if i >= len(records[rank]):
                break
            other = records[rank][i]
            if other["post"]["digest"] != base["post"]["digest"]:
                delta = max_abs_diff(base["post"], other["post"])
                return False, (
                    f"after step {base['pstep']} rank {rank}'s parameters differ from rank 0's "
                    f"(max |diff| {delta:.3g} over a sample)"
                )
    if len(set(counts.values())) > 1:
        return False, f"ranks made different numbers of optimizer steps: {counts}"
    return True, f"{counts[0]} steps, identical parameters on {len(counts)} ranks after each"


def rank0_prints(run: ScriptRun) -> tuple[bool, str]:
    counts = {rank: len(step_lines(run.stdout_path(rank)).lines) for rank in run.ranks()}
    others = {rank: n for rank, n in counts.items() if rank != 0 and n}
    if not counts[0]:
        return False, "rank 0 printed no step lines"
    if others:
        return False, f"step lines printed per rank: {counts}"
    return True, f"rank 0 printed {counts[0]} step lines, the other ranks none"


def max_abs_diff(a: dict[str, Any], b: dict[str, Any]) -> float:
    xs, ys = a.get("sample") or [], b.get("sample") or []
    if len(xs) != len(ys) or not xs:
        return math.inf
    return max(abs(x - y) for x, y in zip(xs, ys, strict=True))


DISTRIBUTED = (
    ("distributed.exactly_once", exactly_once),
    ("distributed.new_order", new_order),
    ("distributed.params_in_sync", params_in_sync),
    ("distributed.rank0_prints", rank0_prints),
)


def distributed_checks(runs: list[ScriptRun]) -> list[Check]:
    checks = []
    for name, judge in DISTRIBUTED:
        verdicts = []
        for run in runs:
            ok, detail = judge(run)
            if run.status != "ok":
                ok, detail = False, f"{failed_run_detail(run)}; {detail}"
            verdicts.append((ok, f"W={run.launch.world_size}: {detail}"))
        checks.append(check(name, all(ok for ok, _ in verdicts), "; ".join(d for _, d in verdicts)))
    return checks


# -- monitoring ------------------------------------------------------------------------------


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def monitoring_checks(run: ScriptRun) -> list[Check]:
    lines = step_lines(run.stdout_path(0)).lines
    if not lines:
        detail = f"no step lines from rank 0 ({failed_run_detail(run)})"
        return [
            check("monitoring.named_phases", False, detail),
            check("monitoring.phases_add_up", False, detail),
        ]
    bad = None
    for line in lines:
        phases = line.get("phases")
        if not isinstance(phases, dict) or len(phases) < 3:
            bad = f"step {line['step']}: phases is {str(phases)[:80]}"
            break
        if not all(_number(v) and v >= 0 for v in phases.values()):
            bad = f"step {line['step']}: a phase time is not a number >= 0: {phases}"
            break
    names = sorted(lines[0].get("phases", {})) if isinstance(lines[0].get("phases"), dict) else []
    named = check(
        "monitoring.named_phases",
        bad is None,
        bad or f"{len(names)} phases on all {len(lines)} step lines: {', '.join(names)}",
    )
    timed = [
        line
        for line in lines
        if isinstance(line.get("phases"), dict)
        and all(_number(v) for v in line["phases"].values())
        and _number(line.get("step_time"))
        and line["step_time"] > 0
    ]
    if not timed:
        adds = check("monitoring.phases_add_up", False, "no step line has phases and step_time")
    else:
        phase_total = sum(sum(line["phases"].values()) for line in timed)
        step_total = sum(line["step_time"] for line in timed)
        ratio = phase_total / step_total
        worst = min(
            (sum(line["phases"].values()) / line["step_time"] for line in timed),
            key=lambda r: -abs(r - 1),
        )
        ok = abs(ratio - 1) <= 0.10 and len(timed) == len(lines)
        missing = len(lines) - len(timed)
        detail = (
            f"phases add up to {ratio:.1%} of the step time over {len(timed)} steps "
            f"(worst step {worst:.0%})" + (f"; {missing} lines lack step_time" if missing else "")
        )
        adds = check("monitoring.phases_add_up", ok, detail)
    return [named, adds]

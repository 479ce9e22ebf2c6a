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
from trainer_lab.usercode.evidence import (
    crash_dumps,
    fetches,
    read_capped,
    step_lines,
    step_records,
    where_stuck,
)
from trainer_lab.usercode.harness import PLANNED, ScriptRun
from trainer_lab.usercode.verdict import check

EXIT_ABORT = "terminate called without an active exception"
OTHER_DATA_TEXT = "other data (the grader's dataset with every sample replaced by one other sample)"
GRAD_RATIO_RANGE = (0.6, 1.6)  # W=3 vs one process on the same data; summed gradients give ~3x


def failed_run_detail(run: ScriptRun) -> str:
    """Why a run did not finish, with the last stderr line when no rank recorded an error."""
    text = run.summary()
    if run.status == "error" and "SIGABRT" in text:
        for rank in run.ranks():
            tail, _ = read_capped(run.stderr_path(rank), 64 * 1024)
            dumps = crash_dumps(run.observe_dir, rank)
            if EXIT_ABORT in tail or dumps:
                where = where_stuck(dumps[0], run.launch.script) if dumps else ""
                return (
                    f"{text}: rank {rank} aborted ({EXIT_ABORT})"
                    + (f" {where}" if where else "")
                    + " while train.py was still running (not inside destroy_process_group); "
                    "expected a clean exit; likely cause: a C++ thread of the runtime was "
                    "torn down under a live process group (e.g. exiting without "
                    "destroy_process_group, or a collective left in flight)"
                )
    kind = run.root_cause.kind if run.root_cause is not None else None
    if run.status == "error" and kind not in ("exception", PLANNED):  # stderr may say why
        tail, _ = read_capped(run.stderr_path(0), 64 * 1024)
        last = [line for line in tail.splitlines() if line.strip()][-1:]
        if last:
            text += f"; stderr: {last[0][:200]}"
    return text


def _ids_preview(ids: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(i) for i in ids[:limit])
    return f"[{shown}{', ...' if len(ids) > limit else ''}]"


# -- skeleton --------------------------------------------------------------------------------


def skeleton_checks(run: ScriptRun, other: ScriptRun) -> list[Check]:
    lines = step_lines(run.stdout_path(0))
    steps_wanted = int(run.launch.args[run.launch.args.index("--steps") + 1])
    made = len(step_records(run.observe_dir, 0))
    exit_ok, exit_detail = run.status == "ok", failed_run_detail(run)
    if exit_ok and made != steps_wanted:
        exit_ok = False
        exit_detail += (
            f"; made {made} optimizer steps, expected exactly {steps_wanted} (--steps); "
            "likely cause: the loop does not stop at global step N"
        )
    elif exit_ok:
        exit_detail += f" after {made} optimizer steps (expected {steps_wanted})"
    checks = [check("skeleton.exits", exit_ok, exit_detail)]

    if lines.bad:
        number, text = lines.bad[0]
        ok, detail = False, f"stdout line {number} is not a step line: {text}"
    elif not lines.lines:
        ok, detail = False, f"no JSON step lines on stdout ({lines.other} other lines)"
    else:
        steps = [line["step"] for line in lines.lines]
        ok = all(b > a for a, b in itertools.pairwise(steps)) and steps[-1] == steps_wanted
        detail = f"{len(steps)} step lines parse (steps {steps[0]}..{steps[-1]})"
        if not all(b > a for a, b in itertools.pairwise(steps)):
            detail = f"steps do not increase: {_ids_preview(steps)}"
        elif not ok:
            detail += f"; expected the last step line to be step {steps_wanted} (--steps)"
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
        if not ok:
            detail += "; expected it to fall; likely cause: no learning (learning rate, loss)"
    learns, learn_detail = learns_from_data(run, other)
    checks.append(check("skeleton.loss_falls", ok and learns, f"{detail}; {learn_detail}"))
    return checks


def learns_from_data(run: ScriptRun, other: ScriptRun) -> tuple[bool, str]:
    """The same script on other data must compute other gradients, reach other parameters and
    print other losses: otherwise what it does does not come from the samples it fetched."""
    if other.status != "ok":
        return False, f"the run on {OTHER_DATA_TEXT} did not finish: {failed_run_detail(other)}"
    mine, theirs = step_records(run.observe_dir, 0), step_records(other.observe_dir, 0)
    if not mine or not theirs:
        return False, f"no optimizer steps to compare with the run on {OTHER_DATA_TEXT}"
    n = min(len(mine), len(theirs))
    same_grad = mine[0]["grad"].get("digest") == theirs[0]["grad"].get("digest")
    same_params = mine[n - 1]["post"].get("digest") == theirs[n - 1]["post"].get("digest")
    printed = [line["loss"] for line in step_lines(run.stdout_path(0)).lines][:n]
    printed_other = [line["loss"] for line in step_lines(other.stdout_path(0)).lines][:n]
    same_loss = bool(printed) and printed == printed_other
    if same_grad or same_params or same_loss:
        what = [
            text
            for text, same in (
                ("step 1's gradients", same_grad),
                (f"the parameters after step {n}", same_params),
                (f"the {len(printed)} printed losses", same_loss),
            )
            if same
        ]
        return False, (
            f"on {OTHER_DATA_TEXT}, {' and '.join(what)} came out bit-identical to the normal "
            "run's; expected them to depend on the samples fetched; likely cause: the update "
            "(or the printed loss) is not computed from the loss on the fetched batch"
        )
    return True, f"on {OTHER_DATA_TEXT} the gradients, parameters and losses differ (as expected)"


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
                "; expected each id once per epoch across ranks; likely cause: the sampler is not "
                "sharded by rank (DistributedSampler with num_replicas=W, rank=r)"
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
                f"(rank 0: {_ids_preview(epochs[e][0])}); expected a new order each epoch; "
                "likely cause: sampler.set_epoch(epoch) is not called before each epoch"
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
                    f"(max |diff| {delta:.3g} over a sample); expected identical replicas; "
                    "likely cause: gradients not all-reduced, or other initial weights per rank"
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
        return False, (
            f"step lines printed per rank: {counts}; expected rank 0 only; likely cause: "
            "the print is not guarded by rank == 0"
        )
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


def global_batch(run: ScriptRun, one: ScriptRun) -> tuple[bool, str]:
    """Step 1 at W ranks against one process, both on the constant data (every sample the same):
    averaged gradients are the one-process gradient (up to dropout noise), summed ones W times."""
    mine, theirs = step_records(run.observe_dir, 0), step_records(one.observe_dir, 0)
    if not mine:
        return True, "no step to compare with one process"  # params_in_sync says why
    if not theirs:
        return False, f"the one-process run on the same data made no step ({one.summary()})"
    if mine[0].get("pre", {}).get("digest") != theirs[0].get("pre", {}).get("digest"):
        return True, (
            "not compared with one process: it started from other initial weights "
            "(seed the model's initialization to make runs comparable)"
        )
    g, g1 = mine[0]["grad"].get("norm") or 0.0, theirs[0]["grad"].get("norm") or 0.0
    if not g1:
        return False, "the one-process run's step-1 gradient is zero: nothing to compare"
    ratio, world = g / g1, run.launch.world_size
    low, high = GRAD_RATIO_RANGE
    text = (
        f"step-1 gradient norm {g:.4g} at W={world} vs {g1:.4g} for one process on the same "
        f"data ({ratio:.2f}x)"
    )
    if ratio > high:
        return False, (
            f"{text}; expected about 1x (one process on the global batch); likely cause: "
            f"gradients summed across ranks instead of averaged (about {world}x)"
        )
    if ratio < low:
        return False, (
            f"{text}; expected about 1x (one process on the global batch); likely cause: "
            "gradients divided by the world size twice (or by too much)"
        )
    return True, f"{text}: as one process on the global batch"


def distributed_checks(runs: list[ScriptRun], one: ScriptRun) -> list[Check]:
    checks = []
    for name, judge in DISTRIBUTED:
        verdicts = []
        for run in runs:
            ok, detail = judge(run)
            if name == "distributed.params_in_sync" and run.launch.data_variant:
                same, text = global_batch(run, one)
                ok, detail = ok and same, f"{detail}; {text}"
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
    if bad:
        bad += "; expected >= 3 named phases, each a number of seconds >= 0"
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
        if not ok:
            detail += (
                "; expected every line to have step_time and the phases within 10 % of it; "
                "likely cause: a part of the step is not timed, or timed twice"
            )
        adds = check("monitoring.phases_add_up", ok, detail)
    return [named, adds]

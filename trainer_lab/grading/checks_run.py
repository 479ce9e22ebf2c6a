"""Checks of the skeleton, distributed and monitoring phases, from what the runs did.

Each function takes the finished runs (trainer_lab.usercode.harness.ScriptRun) and returns lab
checks ({name, passed, detail}); the detail is the evidence a user reads."""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from typing import Any

from trainer_lab.grading import checks_exchange as exchange
from trainer_lab.grading.contract import DATASET_SIZE
from trainer_lab.grading.printed_loss import loss_falls_as_trained
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import (
    crash_dumps,
    fetches,
    group_left_alive,
    read_capped,
    step_lines,
    step_records,
    where_stuck,
)
from trainer_lab.usercode.harness import PLANNED, ScriptRun
from trainer_lab.usercode.verdict import check

EXIT_ABORT = "terminate called without an active exception"
OTHER_DATA_TEXT = "other data (the grader's dataset drawn from another seed)"
# the one-process run on other data against the normal run, same initial weights: how far apart
# the parameters after n steps are, against how far they moved. The model answer measured 1.41;
# a fixed update plus a 1e-4 trace of the data 0.0006
LEARN_APART_MIN = 0.05
GRAD_RATIO_RANGE = (0.6, 1.6)  # W=3 vs one process on the same data; summed gradients give ~3x
# W=3 vs its one-process reference, per step |g3 * |g1|/|g3| - g1| / |g1| (the direction), median
# over the steps. Both runs have dropout off (contract: dropout_off; with it on, 3 ranks' masks
# against one process's put a right answer with Dropout(0.2) 61 % apart): the model answer
# measured 0 %, a gradient broadcast from rank 0 105 %, summed gradients 86 % (and x3.07)
GRAD_OFF_MAX = 0.7
# The first step (same weights) names the cause: a sum or a loss times W is W x the reference's
# gradient, 0 % apart; a rank's gradient broadcast to all is not (one measured 1.96x, another's
# first step lay within 10 % of the reference's direction: neither is a sum).
SAME_DIRECTION_MAX = 0.1
# W=3 against W=2 served the same global batches (both dropout off): a right answer computes the
# same step up to rounding; a sum of gradients is 3/2 (or 2/3) of it
WORLD_RATIO_RANGE = (0.8, 1.25)
WORLD_PARAMS_OFF_MAX = 0.1


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
    exit_facts = {"optimizer_steps": made, "steps_expected": steps_wanted}
    checks = [check("skeleton.exits", exit_ok, exit_detail, exit_facts)]

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

    ok, detail, loss_facts = loss_falls_as_trained(run, lines.lines, steps_wanted)
    learns, learn_detail = learns_from_data(run, other)
    checks.append(
        check("skeleton.loss_falls", ok and learns, f"{detail}; {learn_detail}", loss_facts)
    )
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
    start = mine[0]["pre"].get("sample") or []
    moved = [x - y for x, y in zip(mine[n - 1]["post"].get("sample") or [], start, strict=False)]
    apart = _relative(
        theirs[n - 1]["post"].get("sample") or [], mine[n - 1]["post"].get("sample") or [], moved
    )
    if mine[0]["pre"].get("digest") == theirs[0]["pre"].get("digest") and apart < LEARN_APART_MIN:
        return False, (
            f"on {OTHER_DATA_TEXT}, the parameters after step {n} are only {apart:.2g} of the "
            f"distance they moved apart from the normal run's; expected at least "
            f"{LEARN_APART_MIN:.0%} (updates that come from the samples); likely cause: the "
            "update barely depends on the data (a fixed update with a trace of the data)"
        )
    return True, (
        f"on {OTHER_DATA_TEXT} the gradients, parameters and losses differ (as expected; the "
        f"parameters after step {n} {apart:.0%} of the distance they moved apart)"
    )


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
    if (outside := exchange.outside_reads(run)) is not None:
        return False, outside
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
    """Each rank's conduct as a torchrun worker: only rank 0 prints step lines, and every rank
    that returns has destroyed its process group (contract item 4)."""
    counts = {rank: len(step_lines(run.stdout_path(rank)).lines) for rank in run.ranks()}
    others = {rank: n for rank, n in counts.items() if rank != 0 and n}
    if not counts[0]:
        return False, "rank 0 printed no step lines"
    if others:
        return False, (
            f"step lines printed per rank: {counts}; expected rank 0 only; likely cause: "
            "the print is not guarded by rank == 0"
        )
    alive = [rank for rank in run.ranks() if group_left_alive(run.observe_dir, rank)]
    if alive:
        return False, (
            f"rank {alive[0]} returned with its process group still initialised (ranks "
            f"{alive}); expected dist.destroy_process_group() at the end under torchrun; likely "
            "cause: the script never calls dist.destroy_process_group()"
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


def _relative(a: list[float], b: list[float], scale: list[float] | None = None) -> float:
    """|a - b| / |b| (or / |scale|) over the strided samples; inf when they do not line up."""
    base = scale if scale is not None else b
    if not a or len(a) != len(b) or len(base) != len(a):
        return math.inf
    norm = math.sqrt(sum(x * x for x in base))
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))
    return diff / norm if norm else math.inf


def global_batch(run: ScriptRun, ref: ScriptRun) -> tuple[bool, str]:
    """Rank 0 at W ranks against the reference: the same script as one process, served in its
    step s exactly the global batch the W ranks consumed in their step s. Averaged gradients are
    the one-process gradient (dropout is off in both runs); a gradient of one rank's batch
    (broadcast, or no all-reduce) is not, the sum is W times it. Compared step by step over the
    k steps both made (the median, so that one odd step does not decide)."""
    mine, theirs = step_records(run.observe_dir, 0), step_records(ref.observe_dir, 0)
    world = run.launch.world_size
    if not mine:
        return True, "no step to compare with one process"  # params_in_sync says why
    if not theirs:
        return False, f"the one-process reference run made no step ({failed_run_detail(ref)})"
    if mine[0].get("pre", {}).get("sharded"):
        return _sharded_global_batch(run, theirs)
    if mine[0].get("pre", {}).get("digest") != theirs[0].get("pre", {}).get("digest"):
        return False, (
            "the one-process reference started from other initial weights than the run at "
            f"W={world}; expected the same initial weights in every run (the grader compares "
            "runs); likely cause: the model's initialization is not seeded"
        )
    k = min(len(mine), len(theirs))  # the reference was served the W-rank run's steps
    ratios, offs = [], []
    for a, b in zip(mine[:k], theirs[:k], strict=True):
        norm, norm1 = a["grad"].get("norm") or 0.0, b["grad"].get("norm") or 0.0
        if norm and norm1:  # the direction: the W-rank gradient brought to the reference's norm
            ratios.append(norm / norm1)
            scaled = [x / ratios[-1] for x in a["grad"].get("sample") or []]
            offs.append(_relative(scaled, b["grad"].get("sample") or []))
    if not ratios:
        return False, "the one-process reference's gradients are zero: nothing to compare"
    ratio, grad_off = statistics.median(ratios), statistics.median(offs)
    start = theirs[0]["pre"].get("sample") or []
    moved = [x - y for x, y in zip(theirs[k - 1]["post"].get("sample") or [], start, strict=False)]
    params_off = _relative(
        mine[k - 1]["post"].get("sample") or [], theirs[k - 1]["post"].get("sample") or [], moved
    )
    text = (
        f"against one process served the same global batches, over {k} steps: gradient norm at "
        f"W={world} {ratio:.2f}x the reference's, directions {grad_off:.0%} apart (medians), "
        f"parameters after step {k} {params_off:.0%} of the distance they moved apart"
    )
    low, high = GRAD_RATIO_RANGE
    summed = bool(offs) and offs[0] <= SAME_DIRECTION_MAX and abs(ratios[0] / world - 1) <= 0.1
    if ratio > high and summed:  # a sum also turns later steps (another trajectory)
        cause = f"gradients summed across ranks instead of averaged (about {world}x)"
    elif grad_off > GRAD_OFF_MAX or ratio > high:
        cause = (
            "a step is not one step on the global batch: the gradients are not averaged over "
            "all ranks (e.g. broadcast from one rank instead of all-reduced)"
        )
    elif ratio < low:
        cause = "gradients divided by the world size twice (or by too much)"
    else:
        return True, f"{text}: as one process on the global batch"
    expected = f"expected x{low}-{high} and at most {GRAD_OFF_MAX:.0%} apart"
    return False, f"{text}; {expected}; likely cause: {cause}"


INIT_NORM_TOLERANCE = 1e-5  # relative: the same initial weights, shards put back together


def _sharded_global_batch(run: ScriptRun, theirs: list[dict[str, Any]]) -> tuple[bool, str]:
    """The W-rank run's parameters are sharded (FSDP2): each rank recorded its shard, so the
    norms are put together across ranks (the shards are disjoint) and compared with the
    reference's; directions cannot be lined up shard by shard and are not compared."""
    world = run.launch.world_size
    per_rank = [step_records(run.observe_dir, rank) for rank in run.ranks()]
    k = min(len(theirs), *(len(records) for records in per_rank))

    def whole(step: int, part: str) -> float:
        return math.sqrt(sum((records[step][part].get("norm") or 0.0) ** 2 for records in per_rank))

    start, start1 = whole(0, "pre"), theirs[0]["pre"].get("norm") or 0.0
    if abs(start - start1) > INIT_NORM_TOLERANCE * max(start1, 1e-12):
        return False, (
            f"the one-process reference started from other initial weights than the run at "
            f"W={world} (parameter norm {start1:.6g} vs {start:.6g}, shards put together); "
            "likely cause: the model's initialization is not seeded"
        )
    ratios = [
        whole(i, "grad") / theirs[i]["grad"]["norm"]
        for i in range(k)
        if theirs[i]["grad"].get("norm")
    ]
    if not ratios:
        return False, "the one-process reference's gradients are zero: nothing to compare"
    ratio = statistics.median(ratios)
    low, high = GRAD_RATIO_RANGE
    text = (
        f"against one process served the same global batches, over {k} steps: the gradient norm "
        f"at W={world} (shards put together) is {ratio:.2f}x the reference's (median; sharded "
        "parameters: directions not compared)"
    )
    if low <= ratio <= high:
        return True, f"{text}: as one process on the global batch"
    cause = (
        f"gradients summed across ranks instead of averaged (about {world}x)"
        if ratio > high
        else "gradients divided by the world size twice (or by too much)"
    )
    return False, f"{text}; expected x{low}-{high}; likely cause: {cause}"


def _whole(records: list[list[dict[str, Any]]], step: int, part: str) -> float:
    """The norm of `part` after `step` on the whole model: rank 0's, or its shards' put
    together when the parameters are sharded (the shards are disjoint)."""
    if not records[0][step]["pre"].get("sharded"):
        return records[0][step][part].get("norm") or 0.0
    return math.sqrt(sum((r[step][part].get("norm") or 0.0) ** 2 for r in records))


def same_across_world_sizes(run: ScriptRun, other: ScriptRun) -> tuple[bool, str]:
    """The run at W ranks against `other`, the same script at another world size served the
    same global batches step by step (contract.W2_REFERENCE): at a fixed global batch a step
    does not depend on the world size, so the gradient norms agree step by step (median) and,
    unsharded, so do the parameters after the last step both made. Any scaling by the world
    size (a sum of gradients, scaled away only when the script runs alone) shows here."""
    mine = [step_records(run.observe_dir, rank) for rank in run.ranks()]
    theirs = [step_records(other.observe_dir, rank) for rank in other.ranks()]
    world, world2 = run.launch.world_size, other.launch.world_size
    if not all(mine):
        return True, "no step to compare across world sizes"  # params_in_sync says why
    if not all(theirs):
        return False, (
            f"the run at W={world2} served the same global batches made no step on some rank "
            f"({failed_run_detail(other)})"
        )
    k = min(len(r) for r in (*mine, *theirs))
    ratios = [
        _whole(mine, i, "grad") / _whole(theirs, i, "grad")
        for i in range(k)
        if _whole(theirs, i, "grad")
    ]
    if not ratios:
        return False, f"the run at W={world2}'s gradients are zero: nothing to compare"
    ratio = statistics.median(ratios)
    text = (
        f"against W={world2} served the same global batches, over {k} steps: gradient norm at "
        f"W={world} {ratio:.2f}x (median)"
    )
    sharded = mine[0][0]["pre"].get("sharded") or theirs[0][0]["pre"].get("sharded")
    params_off = 0.0
    if not sharded:
        start = theirs[0][0]["pre"].get("sample") or []
        end = theirs[0][k - 1]["post"].get("sample") or []
        moved = [x - y for x, y in zip(end, start, strict=False)]
        params_off = _relative(mine[0][k - 1]["post"].get("sample") or [], end, moved)
        text += f", parameters after step {k} {params_off:.0%} of the distance they moved apart"
    low, high = WORLD_RATIO_RANGE
    if low <= ratio <= high and params_off <= WORLD_PARAMS_OFF_MAX:
        return True, f"{text}: the world size does not change a step"
    return False, (
        f"{text}; expected x{low}-{high} and at most {WORLD_PARAMS_OFF_MAX:.0%} apart (a global "
        f"batch gives the same step at every world size); likely cause: the update scales with "
        "the world size (gradients summed across ranks instead of averaged, or a loss scaled by "
        "the world size)"
    )


def distributed_checks(
    runs: list[ScriptRun], ref: ScriptRun, ref_w2: ScriptRun | None = None
) -> list[Check]:
    """`ref`: the one-process reference of the run at W=3 (contract.W3_REFERENCE); `ref_w2`: the
    run at W=2 served the same global batches (contract.W2_REFERENCE)."""
    ref_world = 3
    checks = []
    for name, judge in DISTRIBUTED:
        verdicts = []
        for run in runs:
            ok, detail = judge(run)
            if name == "distributed.params_in_sync":
                exchanged, text = exchange.gradients_exchanged(run)
                ok, detail = ok and exchanged, f"{detail}; {text}"
                own, text = exchange.forwards_own_shard(run)
                ok, detail = ok and own, f"{detail}; {text}"
            if name == "distributed.params_in_sync" and run.launch.world_size == ref_world:
                same, text = global_batch(run, ref)
                ok, detail = ok and same, f"{detail}; {text}"
                if ref_w2 is not None:
                    same, text = same_across_world_sizes(run, ref_w2)
                    ok, detail = ok and same, f"{detail}; {text}"
            if run.status != "ok":
                ok, detail = False, f"{failed_run_detail(run)}; {detail}"
            verdicts.append((ok, f"W={run.launch.world_size}: {detail}"))
        checks.append(check(name, all(ok for ok, _ in verdicts), "; ".join(d for _, d in verdicts)))
    return checks

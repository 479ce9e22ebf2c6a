"""Checks of the stretch phases (stretch.py), from what the runs did (torch-free).

The evidence: the recorder's optimizer steps and fetches, rank 0's step lines, and for some runs
the harness's probes (usercode/probes.py): the gradients' digest and norm after every backward
pass and as it began, the forward outputs' dtypes and the parameters' dtypes per optimizer step.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from trainer_lab.grading.checks_run import failed_run_detail, max_abs_diff
from trainer_lab.grading.contract import BATCH_SIZE
from trainer_lab.grading.stretch import (
    ACCUM_K,
    AMP_INF_AT,
    CKPT_EVERY,
    GRAD_RATIO_RANGE,
    REPORTED_RANGE,
    STEP_QUANTILE,
    STRETCH_KILLED_AFTER,
    THROUGHPUT_ORDER,
    THROUGHPUT_TARGET,
)
from trainer_lab.result import Check
from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import (
    fetches,
    read_jsonl,
    save_events,
    step_lines,
    step_records,
)
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

RESUME_TOLERANCE = 1e-6  # max |diff| over the sampled parameters after a resume


def probe_records(run: ScriptRun, rank: int, event: str) -> list[dict[str, Any]]:
    return [
        r
        for r in read_jsonl(run.observe_dir / protocol.probes_file(rank))
        if r.get("event") == event and isinstance(r.get("pstep"), int)
    ]


def backwards_by_step(run: ScriptRun, rank: int) -> dict[int, list[dict[str, Any]]]:
    """Optimizer step s (from 1) -> the backward passes made after step s-1, in order (the
    backward passes after the last step, if any, are under N+1)."""
    found: dict[int, list[dict[str, Any]]] = {}
    for r in probe_records(run, rank, "backward"):
        if isinstance(r.get("grad"), dict):
            found.setdefault(r["pstep"] + 1, []).append(r)
    return found


def _steps_wanted(run: ScriptRun) -> int:
    return int(run.launch.args[run.launch.args.index("--steps") + 1])


def _not_finished(run: ScriptRun) -> str | None:
    return None if run.status == "ok" else failed_run_detail(run)


def _ratio_verdict(ratio: float, what: str, too_high: str, too_low: str) -> tuple[bool, str]:
    low, high = GRAD_RATIO_RANGE
    if ratio > high:
        return False, f"{what} ({ratio:.2f}x); expected about 1x; likely cause: {too_high}"
    if ratio < low:
        return False, f"{what} ({ratio:.2f}x); expected about 1x; likely cause: {too_low}"
    return True, f"{what} ({ratio:.2f}x, expected about 1x)"


# -- accum -----------------------------------------------------------------------------------


def accum_micro_batches(run: ScriptRun) -> tuple[bool, str]:
    wanted = _steps_wanted(run)
    made = {rank: len(step_records(run.observe_dir, rank)) for rank in run.ranks()}
    if made[0] != wanted or len(set(made.values())) > 1:
        return False, (
            f"optimizer steps per rank: {made}, expected {wanted} (--steps) on every rank"
        )
    for rank in run.ranks():
        passes = backwards_by_step(run, rank)
        for step in range(1, wanted + 1):
            n = len(passes.get(step, []))
            if n != ACCUM_K:
                return False, (
                    f"step {step} on rank {rank} ran {n} backward passes, expected {ACCUM_K} "
                    f"(--accum-steps {ACCUM_K}); likely cause: --accum-steps not read, or "
                    "not one backward per micro-batch"
                )
        fetched = len(fetches(run.observe_dir, rank))
        low, high = wanted * ACCUM_K * BATCH_SIZE, (wanted * ACCUM_K + 1) * BATCH_SIZE
        if not low <= fetched <= high:
            return False, (
                f"rank {rank} fetched {fetched} samples in {wanted} steps, expected "
                f"{low} ({ACCUM_K} micro-batches of {BATCH_SIZE} per step); likely cause: "
                "the micro-batches do not each take a new batch"
            )
    return True, (
        f"{wanted} optimizer steps on {len(made)} ranks, each of {ACCUM_K} backward passes and "
        f"{ACCUM_K * BATCH_SIZE} samples per rank"
    )


def _same(digests: list[Any]) -> bool:
    return None not in digests and len(set(digests)) == 1


def accum_one_allreduce(run: ScriptRun) -> tuple[bool, str]:
    wanted = _steps_wanted(run)
    ranks = run.ranks()
    passes = {rank: backwards_by_step(run, rank) for rank in ranks}
    steps = {rank: step_records(run.observe_dir, rank) for rank in ranks}
    checked = 0
    for step in range(1, wanted + 1):
        per_rank = [passes[rank].get(step, []) for rank in ranks]
        if any(len(p) != ACCUM_K for p in per_rank) or any(len(steps[r]) < step for r in ranks):
            return False, (
                f"step {step}: needs {ACCUM_K} backward passes and an optimizer step on every "
                "rank to see when the gradients were all-reduced (see accum.micro_batches)"
            )
        for i in range(ACCUM_K - 1):
            if _same([p[i]["grad"].get("digest") for p in per_rank]):
                return False, (
                    f"step {step}: after micro-batch {i + 1}'s backward the gradients were "
                    f"already identical on every rank: all-reduced there (about {ACCUM_K} "
                    "all-reduces per step instead of one); expected them to differ until the "
                    "last micro-batch; likely cause: the backward of micro-batches "
                    f"1..{ACCUM_K - 1} does not run under ddp.no_sync()"
                )
            if _same([p[i + 1].get("before") for p in per_rank]):
                return False, (
                    f"step {step}: between micro-batch {i + 1} and {i + 2} the gradients became "
                    "identical on every rank: an all-reduce after each micro-batch; expected "
                    "one all-reduce per step; likely cause: the gradients are all-reduced by "
                    "hand after every backward instead of once before the optimizer step"
                )
        at_step = [steps[r][step - 1]["grad"].get("digest") for r in ranks]
        if not _same(at_step):
            return False, (
                f"step {step}: the optimizer stepped with gradients that differ between ranks "
                "(never all-reduced); expected them identical at the step; likely cause: the "
                "last micro-batch's backward also runs under no_sync (or no all-reduce at all)"
            )
        checked += 1
    return True, (
        f"on all {checked} steps the ranks' gradients differed after (and between) micro-batches "
        f"1..{ACCUM_K - 1} and were identical at the optimizer step: one all-reduce per step"
    )


def accum_matches_large_batch(accum: ScriptRun, k1: ScriptRun) -> tuple[bool, str]:
    for run in (accum, k1):
        if run.status != "ok":
            return False, f"{run.launch.name}: {failed_run_detail(run)}"
    mine, theirs = step_records(accum.observe_dir, 0), step_records(k1.observe_dir, 0)
    if not mine or not theirs:
        return False, "no optimizer step to compare at K=1 and K=4"
    if mine[0]["pre"].get("digest") != theirs[0]["pre"].get("digest"):
        return False, (
            f"the runs at K={ACCUM_K} and K=1 started from other weights; expected the same "
            "initial weights; likely cause: the model's initialization is not seeded"
        )
    g, g1 = mine[0]["grad"].get("norm") or 0.0, theirs[0]["grad"].get("norm") or 0.0
    if not g1:
        return False, "the K=1 run's step-1 gradient is zero: nothing to compare"
    what = f"step-1 gradient norm {g:.4g} at K={ACCUM_K} vs {g1:.4g} at K=1 on the same samples"
    return _ratio_verdict(
        g / g1,
        what,
        f"the micro-batch loss is not divided by K (the gradients of {ACCUM_K} micro-batches "
        "summed: about K times the large-batch step)",
        "the loss divided by K twice (or by too much)",
    )


def accum_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    run = runs["accum-w2"]
    failed = _not_finished(run)
    checks = []
    for name, judge in (
        ("accum.micro_batches", accum_micro_batches),
        ("accum.one_allreduce_per_step", accum_one_allreduce),
    ):
        ok, detail = judge(run)
        if failed:
            ok, detail = False, f"{failed}; {detail}"
        checks.append(check(name, ok, detail))
    ok, detail = accum_matches_large_batch(runs["accum-const"], runs["accum-k1-const"])
    checks.append(check("accum.matches_large_batch", ok, detail))
    return checks


def stretch_checks(phase: str, runs: dict[str, ScriptRun]) -> list[Check]:
    if phase == "accum":
        return accum_checks(runs)
    if phase == "fsdp2":
        return fsdp2_checks(runs)
    if phase == "amp":
        return amp_checks(runs)
    return throughput_checks(runs)


# -- fsdp2 -----------------------------------------------------------------------------------


def fsdp2_sharded(run: ScriptRun, one: ScriptRun) -> tuple[bool, str]:
    records = {rank: step_records(run.observe_dir, rank) for rank in run.ranks()}
    if not all(records.values()):
        counts = {rank: len(r) for rank, r in records.items()}
        return False, f"optimizer steps seen per rank: {counts}"
    world = len(records)
    plain = [rank for rank, r in records.items() if not r[0]["post"].get("sharded")]
    if plain:
        return False, (
            f"the parameters the optimizer steps on rank {plain[0]} are plain tensors, not "
            "DTensors; expected FSDP2's sharded parameters; likely cause: the model is not "
            "fully_shard-ed, or the optimizer was built before fully_shard (it then holds the "
            "replaced, unsharded parameters)"
        )
    held = {rank: int(r[0]["post"].get("numel") or 0) for rank, r in records.items()}
    total = sum(held.values())
    whole = step_records(one.observe_dir, 0)
    model = int(whole[0]["post"].get("numel") or 0) if whole else None
    shares = ", ".join(f"rank {r}: {n}" for r, n in sorted(held.items()))
    text = f"DTensor parameters on {world} ranks; elements held {shares} (of {total})"
    most = max(held.values())
    if most > 1.5 * total / world:
        return False, (
            f"{text}; expected each rank to hold about 1/{world} of the model; likely cause: "
            "the parameters are replicated (a Replicate placement), not sharded"
        )
    if model is not None and total != model:
        return False, (
            f"{text}, the one-process run's model has {model}; expected the shards to add up "
            "to the whole model; likely cause: parameters replicated on some ranks, or not all "
            "parameters given to the optimizer"
        )
    return True, f"{text}, the whole model's count" if model else text


def _shard_norm(records: dict[int, list[dict[str, Any]]], key: str, step: int = 0) -> float:
    """The norm over all ranks' shards: sqrt of the sum of each rank's squared norm."""
    return math.sqrt(sum((r[step][key].get("norm") or 0.0) ** 2 for r in records.values()))


def loss_falls(run: ScriptRun) -> tuple[bool, str]:
    losses = [float(line["loss"]) for line in step_lines(run.stdout_path(0)).lines]
    if len(losses) < 4 or not all(math.isfinite(x) for x in losses):
        return False, f"need at least 4 finite losses from rank 0, got {len(losses)}"
    k = max(1, len(losses) // 4)
    first, last = sum(losses[:k]) / k, sum(losses[-k:]) / k
    text = f"loss {first:.4g} -> {last:.4g} (mean of the first and last {k} steps)"
    if last >= first:
        return False, f"{text}; expected it to fall; likely cause: no learning"
    return True, text


def fsdp2_learns(run: ScriptRun, const: ScriptRun, one: ScriptRun) -> tuple[bool, str]:
    ok, text = loss_falls(run)
    for other in (const, one):
        if other.status != "ok":
            return False, f"{text}; {other.launch.name}: {failed_run_detail(other)}"
    records = {rank: step_records(const.observe_dir, rank) for rank in const.ranks()}
    whole = step_records(one.observe_dir, 0)
    if not all(records.values()) or not whole:
        return False, f"{text}; no optimizer step to compare with one process"
    if not all(r[0]["post"].get("sharded") for r in records.values()):
        return False, (
            f"{text}; the parameters at W=2 are not sharded (see fsdp2.sharded): not compared "
            "with one process"
        )
    start, start1 = _shard_norm(records, "pre"), whole[0]["pre"].get("norm") or 0.0
    if not math.isclose(start, start1, rel_tol=1e-5):
        return False, (
            f"{text}; the W=2 and one-process runs started from other weights (norm "
            f"{start:.6g} vs {start1:.6g}); expected the same initial weights; likely cause: the "
            "model's initialization is not seeded (or differs per rank)"
        )
    g, g1 = _shard_norm(records, "grad"), whole[0]["grad"].get("norm") or 0.0
    if not g1:
        return False, f"{text}; the one-process run's step-1 gradient is zero"
    same, detail = _ratio_verdict(
        g / g1,
        f"step-1 gradient norm over the shards {g:.4g} at W=2 vs {g1:.4g} for one process on "
        "the same global batch",
        "gradients summed across ranks, not averaged (about W times)",
        "gradients divided by the world size twice (or by too much)",
    )
    if run.status != "ok":
        return False, f"{failed_run_detail(run)}; {text}; {detail}"
    return ok and same, f"{text}; {detail}"


def _killed(run: ScriptRun) -> bool:
    return any(e["event"] == "killed" for e in save_events(run.observe_dir, run.ranks()))


def real_steps(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The optimizer steps that could change something: torch.distributed.checkpoint's
    get_state_dict / set_state_dict create a fresh optimizer's state with a step on zero
    gradients (learning rate 0), which the recorder sees as a step that changed nothing."""
    return [
        r
        for r in records
        if not (
            r["pre"].get("digest") == r["post"].get("digest")
            and not (r.get("grad") or {}).get("norm")
        )
    ]


def _resumed_at(reference: list[dict[str, Any]], relaunch: list[dict[str, Any]]) -> int | None:
    known = {rec["post"]["digest"]: rec["pstep"] for rec in reference}
    if reference and isinstance(reference[0].get("pre"), dict):
        known.setdefault(reference[0]["pre"]["digest"], 0)
    if not relaunch or not isinstance(relaunch[0].get("pre"), dict):
        return None
    return known.get(relaunch[0]["pre"]["digest"])


def resumed_matches(
    reference: ScriptRun, killed: ScriptRun, relaunch: ScriptRun, expected: tuple[int, ...]
) -> tuple[bool, str, int | None]:
    """Every rank of the relaunch starts from the reference's parameters (this rank's shard)
    after an optimizer step in `expected` (the first is the one named) and matches it after
    every later step: (ok, evidence, the step it resumed after)."""
    if not _killed(killed):
        return False, f"rank 1 was never killed: {failed_run_detail(killed)}", None
    if relaunch.status != "ok":
        return False, f"the relaunch: {failed_run_detail(relaunch)}", None
    resumed_at: int | None = None
    exact = True
    for rank in reference.ranks():
        u = real_steps(step_records(reference.observe_dir, rank))
        r = real_steps(step_records(relaunch.observe_dir, rank))
        resumed = _resumed_at(u, r)
        if resumed not in expected:
            seen = "no step of the uninterrupted run" if resumed is None else f"step {resumed}"
            return (
                False,
                (
                    f"rank {rank} resumed from the parameters after {seen}, expected optimizer "
                    f"step {expected[0]} (the newest checkpoint before the kill); likely cause: "
                    "its parameters (its shard, under FSDP2) were not loaded from the newest "
                    "checkpoint"
                ),
                resumed,
            )
        resumed_at = resumed
        by_step = {rec["pstep"]: rec for rec in u}
        for i, rec in enumerate(r, start=1):
            base = by_step.get(resumed + i)
            if base is None:
                return False, f"rank {rank} made more steps than the uninterrupted run", resumed
            if rec["post"]["digest"] != base["post"]["digest"]:
                exact = False
                diff = max_abs_diff(rec["post"], base["post"])
                if diff > RESUME_TOLERANCE:
                    return (
                        False,
                        (
                            f"rank {rank}: after step {resumed + i} the parameters differ from "
                            f"the uninterrupted run's (max |diff| {diff:.3g} over a sample); "
                            "expected them equal; likely cause: state missing from the checkpoint "
                            "(optimizer "
                            "state, RNG state, sampler position)"
                        ),
                        resumed,
                    )
        if len(r) != len(u) - resumed:
            return (
                False,
                (f"rank {rank} made {len(r)} steps after the resume, expected {len(u) - resumed}"),
                resumed,
            )
    how = "bit for bit" if exact else f"within {RESUME_TOLERANCE:g}"
    return (
        True,
        (
            f"rank 1 SIGKILLed after step {STRETCH_KILLED_AFTER}, relaunched: every rank resumed "
            f"from its parameters after step {resumed_at} and matched the uninterrupted run after "
            f"every later step ({how})"
        ),
        resumed_at,
    )


def fsdp2_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    run = runs["fsdp-w2"]
    ok, detail = fsdp2_sharded(run, runs["fsdp-one-const"])
    if run.status != "ok":
        ok, detail = False, f"{failed_run_detail(run)}; {detail}"
    checks = [check("fsdp2.sharded", ok, detail)]
    ok, detail = fsdp2_learns(run, runs["fsdp-const"], runs["fsdp-one-const"])
    checks.append(check("fsdp2.learns", ok, detail))
    expected = (STRETCH_KILLED_AFTER - 1) // CKPT_EVERY * CKPT_EVERY
    ok, detail, _ = resumed_matches(run, runs["fsdp-kill"], runs["fsdp-resume"], (expected,))
    checks.append(check("fsdp2.resumes", ok, detail))
    return checks


# -- amp -------------------------------------------------------------------------------------


def scales(run: ScriptRun, rank: int = 0) -> dict[int, float]:
    """Optimizer step -> the loss scale it was taken at: the gradients' norm after the last
    backward before it over the norm the optimizer stepped with (1.0: no scaling). Steps whose
    norms are not finite or zero are left out."""
    last: dict[int, float] = {}
    for r in probe_records(run, rank, "backward"):
        norm = r["grad"].get("norm") if isinstance(r.get("grad"), dict) else None
        if isinstance(norm, int | float):
            last[r["pstep"] + 1] = float(norm)
    found = {}
    for rec in step_records(run.observe_dir, rank):
        after, at = last.get(rec["pstep"]), rec["grad"].get("norm")
        if after and at and math.isfinite(after) and math.isfinite(at):
            found[rec["pstep"]] = after / at
    return found


def _fmt_scales(found: dict[int, float]) -> str:
    spans: list[tuple[int, int, float]] = []
    for step in sorted(found):
        value = found[step]
        if spans and math.isclose(spans[-1][2], value, rel_tol=1e-3) and spans[-1][1] == step - 1:
            spans[-1] = (spans[-1][0], step, spans[-1][2])
        else:
            spans.append((step, step, value))
    return ", ".join(
        f"{v:.6g} at steps {a}-{b}" if a != b else f"{v:.6g} at step {a}" for a, b, v in spans
    )


def amp_autocast(run: ScriptRun) -> tuple[bool, str]:
    seen = 0
    for rank in run.ranks():
        for r in probe_records(run, rank, "step"):
            outputs, params = r.get("outputs") or {}, r.get("params") or {}
            if not outputs.get("bfloat16"):
                return False, (
                    f"rank {rank}, optimizer step {r['pstep']}: outputs of the modules that "
                    f"hold parameters by dtype {outputs}, none bfloat16; expected the forward "
                    "under torch.autocast('cpu', dtype=torch.bfloat16); likely cause: no "
                    "autocast around the forward pass"
                )
            if set(params) != {"float32"}:
                return False, (
                    f"rank {rank}, optimizer step {r['pstep']}: parameters by dtype {params}; "
                    "expected float32 master weights; likely cause: the model cast to "
                    "bfloat16 (model.bfloat16()) instead of autocast"
                )
            seen += 1
    if not seen:
        return False, "no optimizer step recorded with its forward dtypes"
    return True, (
        f"on all {seen} optimizer steps (all ranks) the modules' outputs were bfloat16 and the "
        "parameters float32"
    )


def amp_loss_scaled(run: ScriptRun) -> tuple[bool, str]:
    found = scales(run)
    if not found:
        return False, "no optimizer step with finite gradients to measure a loss scale on"
    low = min(found.values())
    text = f"gradients after backward / at the optimizer step: {_fmt_scales(found)}"
    if low < 1.5:
        return False, (
            f"{text}; expected a scale > 1 on every step; likely cause: the loss is not "
            "multiplied by the scaler's scale before backward (scaler.scale(loss)), or the "
            "gradients are not unscaled before the step"
        )
    return True, f"{text}: the loss was scaled and the gradients unscaled before every step"


def amp_skips_nonfinite(run: ScriptRun) -> tuple[bool, str]:
    injected_at = AMP_INF_AT - 1
    for rank in run.ranks():
        injected = probe_records(run, rank, "inf_injected")
        if not injected:
            return False, (
                f"rank {rank} made no backward pass after {injected_at} optimizer steps: the "
                "overflow could not be injected"
            )
        passes = probe_records(run, rank, "backward")
        after = [p for p in passes if p["pstep"] >= injected_at]
        if len(after) < 2:
            return False, f"rank {rank}: no backward pass after the one with the inf gradient"
        if after[1]["pstep"] != injected_at:
            return False, (
                f"rank {rank}: the step with an inf gradient (loop step {AMP_INF_AT}) made an "
                "optimizer step; expected it skipped; likely cause: optimizer.step() called "
                "directly instead of scaler.step(optimizer), or no check for inf/nan"
            )
        bad = [
            r["pstep"]
            for r in step_records(run.observe_dir, rank)
            if not math.isfinite(r["post"].get("norm") or 0.0)
        ]
        if bad:
            return False, f"rank {rank}: parameters not finite after optimizer step {bad[0]}"
    found = scales(run)
    before, later = found.get(injected_at), found.get(injected_at + 1)
    if before is None or later is None:
        return False, (
            f"the step with the inf gradient was skipped, but no loss scale was seen around it "
            f"(scales: {_fmt_scales(found) or 'none'})"
        )
    text = (
        f"the inf gradient at loop step {AMP_INF_AT} made no optimizer step on any rank; the "
        f"scale went {before:.6g} -> {later:.6g}"
    )
    if not later < before:
        return False, (
            f"{text}; expected it lower after the overflow; likely cause: scaler.update() not "
            "called after scaler.step (or the scale not backed off on a skipped step)"
        )
    return True, f"{text} (backed off)"


def amp_scaler_resumed(
    reference: ScriptRun, killed: ScriptRun, relaunch: ScriptRun
) -> tuple[bool, str]:
    # the checkpoint after loop step 8 holds optimizer step 7 (the overflow at step 6 skipped),
    # or 8 when the overflow was not skipped (amp.skips_nonfinite says so)
    saved = (STRETCH_KILLED_AFTER - 1) // CKPT_EVERY * CKPT_EVERY
    ok, text, resumed = resumed_matches(reference, killed, relaunch, (saved - 1, saved))
    if resumed is None:
        return False, text
    u, r = scales(reference), scales(relaunch)
    if not u or min(u.values()) < 1.5:
        return False, f"{text}; no loss scale > 1 to compare (see amp.loss_scaled)"
    first = real_steps(step_records(relaunch.observe_dir, 0))
    pairs = [(rec["pstep"], resumed + i) for i, rec in enumerate(first, start=1)]
    for mine, theirs in pairs:
        if mine in r and theirs in u and not math.isclose(r[mine], u[theirs], rel_tol=1e-3):
            return False, (
                f"{text}; but the loss scale after the resume was {r[mine]:.6g} at optimizer "
                f"step {theirs}, the uninterrupted run's {u[theirs]:.6g}; expected the saved "
                "scale; likely cause: the scaler's state is not in the checkpoint or not "
                "restored (scaler.state_dict() / load_state_dict())"
            )
    if not ok:
        return False, text
    shown = u.get(resumed + 1)
    return (
        True,
        f"{text}; the loss scale after the resume was the saved one ({shown:.6g})"
        if shown
        else text,
    )


def amp_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    run = runs["amp-w2"]
    failed = _not_finished(run)
    checks = []
    for name, judge in (
        ("amp.autocast", amp_autocast),
        ("amp.loss_scaled", amp_loss_scaled),
        ("amp.skips_nonfinite", amp_skips_nonfinite),
    ):
        ok, detail = judge(run)
        if failed:
            ok, detail = False, f"{failed}; {detail}"
        checks.append(check(name, ok, detail))
    ok, detail = amp_scaler_resumed(run, runs["amp-kill"], runs["amp-resume"])
    checks.append(check("amp.scaler_resumed", ok, detail))
    return checks


# -- throughput ------------------------------------------------------------------------------


def observed_throughput(run: ScriptRun) -> tuple[float | None, tuple[int, int], str]:
    """(samples/s over steps k+1..N, (k, N), evidence): the samples every rank fetched for those
    steps over the time between rank 0's optimizer steps k and N (the first quarter is warm-up)."""
    records = step_records(run.observe_dir, 0)
    n = len(records)
    k = n // 4
    if n < 4:
        return None, (0, n), f"{n} optimizer steps recorded, need at least 4"
    seconds = float(records[-1]["time"]) - float(records[k - 1]["time"]) if k else 0.0
    samples = sum(
        1 for rank in run.ranks() for done, _ in fetches(run.observe_dir, rank) if k <= done < n
    )
    if seconds <= 0 or not samples:
        return None, (k, n), f"no samples or no time between steps {k} and {n}"
    rate = samples / seconds
    return rate, (k, n), f"{samples} samples in {seconds:.3f} s over steps {k + 1}-{n}"


def throughput_reported(run: ScriptRun) -> tuple[bool, str]:
    rate, (k, n), evidence = observed_throughput(run)
    if rate is None:
        return False, f"{failed_run_detail(run)}; {evidence}"
    lines = [line for line in step_lines(run.stdout_path(0)).lines if k < line["step"] <= n]
    values = [line.get("samples_per_s") for line in lines]
    if not lines or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
        for v in values
    ):
        shown = next((v for v in values if not isinstance(v, int | float)), values[:1])
        return False, (
            f"step lines {k + 1}-{n} must carry samples_per_s > 0, found {str(shown)[:60]}; "
            f"observed {rate:.1f} samples/s ({evidence})"
        )
    logged = len(values) / sum(1.0 / float(v) for v in values)  # time-weighted: harmonic mean
    ratio = logged / rate
    low, high = REPORTED_RANGE
    text = (
        f"logged {logged:.1f} samples/s (harmonic mean of steps {k + 1}-{n}), observed "
        f"{rate:.1f} ({evidence}): {ratio:.2f}x"
    )
    if ratio > high:
        return False, (
            f"{text}; expected within x{low}-{high}; likely cause: the claim is inflated "
            "(samples counted on every rank and multiplied by W again, or a time that leaves "
            "part of the step out)"
        )
    if ratio < low:
        return False, f"{text}; expected within x{low}-{high}; likely cause: samples undercounted"
    return True, text


def typical_rate(run: ScriptRun) -> tuple[float | None, str]:
    """Samples/s of a fast step: global samples per step over the STEP_QUANTILE-th quantile of the
    times between rank 0's consecutive optimizer steps (after the first quarter). A quantile, not
    the total: on a shared machine the steps other processes stalled would decide a total,
    while the fast steps show what the script itself costs."""
    records = step_records(run.observe_dir, 0)
    n = len(records)
    k = n // 4
    times = [float(r["time"]) for r in records[k:]]
    gaps = sorted(b - a for a, b in itertools.pairwise(times) if b > a)
    fetched = sum(
        1 for rank in run.ranks() for done, _ in fetches(run.observe_dir, rank) if k <= done < n
    )
    if len(gaps) < 3 or not fetched:
        return None, f"{n} optimizer steps recorded, need at least 4 with samples"
    per_step = fetched / (n - k)
    fast = gaps[int(STEP_QUANTILE * (len(gaps) - 1))]
    share = f"{STEP_QUANTILE:.0%}"
    text = f"{per_step:g} samples per step, {share} of steps within {fast * 1e3:.2f} ms"
    return per_step / fast, text


def throughput_target(runs: list[ScriptRun], references: list[ScriptRun]) -> tuple[bool, str]:
    """Each side's fastest run (typical_rate) against THROUGHPUT_TARGET."""
    mine = [r for r in (typical_rate(run) for run in runs) if r[0] is not None]
    theirs = [r for r in (typical_rate(run) for run in references) if r[0] is not None]
    if not theirs:
        return False, "the model answer's runs gave no throughput"
    if not mine:
        return False, f"{failed_run_detail(runs[0])}; {typical_rate(runs[0])[1]}"
    (rate, evidence), (ref, ref_evidence) = max(mine), max(theirs)
    assert rate is not None and ref is not None
    text = (
        f"{rate:.1f} samples/s ({evidence}), the model answer {ref:.1f} ({ref_evidence}) in "
        f"the same grading (the fastest of {len(runs)} runs each): {rate / ref:.2f}x"
    )
    if rate < THROUGHPUT_TARGET * ref:
        return False, (
            f"{text}; expected >= {THROUGHPUT_TARGET}x; likely cause: time spent outside the "
            "training step every step (a blocking read, a save or a collective per step)"
        )
    return True, f"{text} (target {THROUGHPUT_TARGET}x)"


def throughput_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    mine = [runs[name] for name, ref in THROUGHPUT_ORDER if not ref]
    references = [runs[name] for name, ref in THROUGHPUT_ORDER if ref]
    run = mine[0]
    failed = next((f"{r.launch.name}: {_not_finished(r)}" for r in mine if _not_finished(r)), None)
    checks = []
    for name, (ok, detail) in (
        ("throughput.reported_matches_observed", throughput_reported(run)),
        ("throughput.target", throughput_target(mine, references)),
    ):
        if failed:
            ok, detail = False, f"{failed}; {detail}"
        checks.append(check(name, ok, detail))
    return checks

"""Checks of the restart phase, and the likely cause of a bad resume (torn saves: checks_torn.py).

A relaunch is lined up with the uninterrupted run (U) by its parameters: the digest of the
parameters before its first optimizer step names the U step it resumed after. From there, step by
step, it is compared with U: samples fetched, gradients, parameters. Where it first departs
tells the cause apart:
- other samples                          -> sampler position not restored;
- same samples, other gradients          -> RNG state not restored (dropout masks), e.g. a
                                            DataLoader iterator seeded from the global RNG;
- same gradients, other update           -> optimizer state not restored;
and the size of the first difference against a normal update separates a large jump (fresh
optimizer moments) from small, growing differences (a shifted RNG stream).
"""

from __future__ import annotations

import math
from typing import Any

from trainer_lab.grading.checks_run import failed_run_detail, max_abs_diff
from trainer_lab.grading.contract import CKPT_EVERY, RESTART_KILLED_AFTER
from trainer_lab.grading.facts import cause_text, causes_of
from trainer_lab.grading.replay import replay_cause, replayed_samples
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import (
    fetches,
    optimizer_records,
    save_events,
    step_lines,
    step_records,
)
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

JUMP_RATIO = 0.5  # a first difference >= half a normal update is a "large jump"
SAMPLER_CAUSE = "sampler position not restored (other samples after the resume)"
RNG_CAUSE = (
    "RNG stream shifted: same weights and samples, other gradients (dropout masks): the RNG "
    "state was not restored, or something drew from the global RNG after restoring it (a "
    "DataLoader iterator without its own generator does)"
)


def _by_step(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {r["pstep"]: r for r in records}


def resumed_after(reference: ScriptRun, relaunch: ScriptRun) -> int | None:
    """The step of U whose parameters the relaunch started from (0: the initial weights)."""
    u = step_records(reference.observe_dir, 0)
    r = step_records(relaunch.observe_dir, 0)
    if not u or not r or not isinstance(r[0].get("pre"), dict):
        return None
    known = {rec["post"]["digest"]: rec["pstep"] for rec in u}
    if isinstance(u[0].get("pre"), dict):
        known.setdefault(u[0]["pre"]["digest"], 0)
    return known.get(r[0]["pre"]["digest"])


def _fetches_by_step(run: ScriptRun, rank: int, offset: int) -> dict[int, list[int]]:
    """Global step -> ids fetched for it (a fetch after c optimizer steps feeds step c+1)."""
    found: dict[int, list[int]] = {}
    for done, sample in fetches(run.observe_dir, rank):
        found.setdefault(offset + done + 1, []).append(sample)
    return found


def resumed_by_rank(reference: ScriptRun, relaunch: ScriptRun) -> dict[int, int]:
    """Rank -> the step after which it resumed, told by the batch it read first: the relaunch's
    first batch on that rank is the uninterrupted run's batch for step s+1 (ranks whose first
    batch is no step's are left out)."""
    found: dict[int, int] = {}
    for rank in relaunch.ranks():
        first = _fetches_by_step(relaunch, rank, 0).get(1)
        if not first:
            continue
        u = _fetches_by_step(reference, rank, 0)
        steps = [s for s in sorted(u) if u[s] == first]
        if len(steps) == 1:
            found[rank] = steps[0] - 1
    return found


def ranks_disagree(reference: ScriptRun, relaunch: ScriptRun) -> str | None:
    """The likely cause when the relaunch's ranks resumed from different steps."""
    found = resumed_by_rank(reference, relaunch)
    if len(set(found.values())) < 2:
        return None
    where = ", ".join(f"rank {r} after step {s}" for r, s in sorted(found.items()))
    return (
        f"the ranks resumed from different checkpoints ({where}, by the samples each read "
        "first): each rank took its own newest file, but a checkpoint is complete only when "
        "every rank's part of it is: the ranks must agree on the step to resume at (e.g. the "
        "minimum of each rank's newest, all-reduced)"
    )


def _first_printed_step(run: ScriptRun) -> int | None:
    lines = step_lines(run.stdout_path(0)).lines
    return lines[0]["step"] if lines else None


def _checkpoint_writes(first: ScriptRun) -> list[tuple[int, str]]:
    """(step, path) of the last three checkpoint files the first run wrote (renames: the
    final name)."""
    events = save_events(first.observe_dir, first.ranks())
    renamed = {e.get("src") for e in events if e["event"] == "rename"}
    saves = sorted(
        {
            (e["pstep"], e["path"])
            for e in events
            if e["event"] in ("save", "write", "rename") and e["path"] not in renamed
        }
    )
    return saves[-3:]


def resume_facts(reference: ScriptRun, first: ScriptRun, relaunch: ScriptRun) -> dict[str, Any]:
    """What resume_checks' evidence says, as data (trainer_lab.grading.facts)."""
    return {
        "resumed_after": resumed_after(reference, relaunch),
        "first_step_line": _first_printed_step(relaunch),
        "checkpoint_writes": [{"path": p, "step": s} for s, p in _checkpoint_writes(first)],
        "made_no_step": not step_records(relaunch.observe_dir, 0),
    }


def resume_checks(
    reference: ScriptRun, first: ScriptRun, relaunch: ScriptRun, expected: int, prefix: str
) -> tuple[int | None, str]:
    """(step resumed after, evidence) shared by the restart and torn phases."""
    resumed = resumed_after(reference, relaunch)
    printed = _first_printed_step(relaunch)
    saves = _checkpoint_writes(first)
    saved = ", ".join(f"{p} after step {s}" for s, p in saves) or "none"
    if resumed is None:
        where = "its parameters before the first step match no step of the uninterrupted run"
        if not step_records(relaunch.observe_dir, 0):
            where = f"it made no optimizer step ({failed_run_detail(relaunch)})"
        return None, (
            f"{prefix}: {where}; expected the weights after step {expected}; checkpoint writes "
            f"seen: {saved}; likely cause: the weights were not loaded from the checkpoint"
        )
    text = f"{prefix}: resumed from the weights after step {resumed} (expected {expected})"
    if printed is not None:
        text += f", first step line {printed} (expected {expected + 1})"
    text += f"; checkpoint writes seen: {saved}"
    u, r = _fetches_by_step(reference, 0, 0), _fetches_by_step(relaunch, 0, resumed)
    replayed = replayed_samples(u, r, resumed, expected)
    if resumed < expected and printed == expected + 1 and replayed:
        text += f"; likely cause: {replay_cause(resumed, expected, replayed)}"
    elif resumed == 0:
        text += (
            "; likely cause: the checkpoint's weights were not loaded (the relaunch started "
            "from the initial weights)"
        )
    elif resumed < expected:
        text += (
            f"; likely cause: an older checkpoint than the newest complete one (step {expected}) "
            "was loaded (e.g. the newest picked by string order, or a complete one rejected)"
        )
    elif resumed > expected:
        text += "; likely cause: an incomplete (torn) checkpoint was taken for complete"
    elif printed is not None and printed != expected + 1:
        text += "; likely cause: the step counter was not restored with the weights"
    return resumed, text


def planned_kill(killed: ScriptRun) -> tuple[int, int]:
    """(rank, after step) of the kill the grading's fault plan put in this launch."""
    faults = killed.launch.faults
    if faults.kill_rank is None or faults.kill_after_step is None:
        return 1, RESTART_KILLED_AFTER
    return faults.kill_rank, faults.kill_after_step


def restart_checks(reference: ScriptRun, killed: ScriptRun, relaunch: ScriptRun) -> list[Check]:
    rank, after = planned_kill(killed)
    expected = (after - 1) // CKPT_EVERY * CKPT_EVERY
    was_killed = any(
        e["event"] == "killed" for e in save_events(killed.observe_dir, killed.ranks())
    )
    if not was_killed:
        detail = (
            f"the planned kill of rank {rank} after step {after} did not happen: rank {rank} "
            f"never reached step {after}: {failed_run_detail(killed)}"
        )
        names = ("resumes_at_checkpoint", "no_replay_or_skip", "matches_uninterrupted")
        return [check(f"restart.{n}", False, detail) for n in names] + [single_writer(reference)]
    prefix = f"planned fault: rank {rank} SIGKILLed after step {after}, relaunched"
    resumed, evidence = resume_checks(reference, killed, relaunch, expected, prefix)
    split = ranks_disagree(reference, relaunch)
    if split is not None:
        evidence = f"{evidence.split('; likely cause: ')[0]}; likely cause: {split}"
    printed = _first_printed_step(relaunch)
    ok = split is None and resumed == expected and (printed is None or printed == expected + 1)
    facts = {
        "killed_rank": rank,
        "killed_after": after,
        "expected_step": expected,
        **resume_facts(reference, killed, relaunch),
    }
    checks = [check("restart.resumes_at_checkpoint", ok, evidence, facts)]
    offset = resumed if resumed is not None else expected
    checks.append(no_replay_or_skip(reference, relaunch, offset))
    matches = matches_uninterrupted(reference, relaunch, offset, resumed is not None)
    older = resumed is not None and resumed < expected
    if not matches["passed"] and older and "likely cause: " in evidence:
        # resumed at an older step: the samples read before the newest checkpoint were served
        # other values (the past is not replayable), so the runs part at once; the cause is the
        # one restart.resumes_at_checkpoint names (shown once), not what the step-by-step
        # comparison would guess
        seen = matches["detail"].split("; likely cause: ")[0]
        matches = check(
            matches["name"],
            False,
            f"{seen}; the relaunch resumed after step {resumed}, not {expected}, and its first "
            "batch was served other values (samples from before the newest checkpoint); likely "
            f"cause: {evidence.split('likely cause: ', 1)[1]}",
            {**matches.get("facts", {}), "causes": causes_of(checks[0])},
        )
    checks.append(matches)
    checks.append(single_writer(reference))
    return checks


def no_replay_or_skip(reference: ScriptRun, relaunch: ScriptRun, offset: int) -> Check:
    for rank in reference.ranks():
        u = _fetches_by_step(reference, rank, 0)
        r = _fetches_by_step(relaunch, rank, offset)
        steps = sorted(s for s in r if s in u and s > offset)
        if not steps:
            return check("restart.no_replay_or_skip", False, f"rank {rank} fetched nothing")
        for step in steps:
            if r[step] != u[step]:
                before = {i for s, ids in u.items() if s <= offset for i in ids}
                again = sorted(set(r[step]) & before)
                what = (
                    f"{len(again)} of them already trained on before the checkpoint"
                    if again
                    else "a different batch"
                )
                facts = {
                    "rank": rank,
                    "step": step,
                    "resumed_after": offset,
                    "fetched": r[step],
                    "expected": u[step],
                    "already_trained": len(again),
                    "causes": [SAMPLER_CAUSE],
                }
                return check(
                    "restart.no_replay_or_skip",
                    False,
                    f"rank {rank}, step {step} (resumed after {offset}): fetched {r[step]}, the "
                    f"uninterrupted run {u[step]}: {what}{cause_text([SAMPLER_CAUSE])}",
                    facts,
                )
    return check(
        "restart.no_replay_or_skip",
        True,
        f"after step {offset} every rank fetched the uninterrupted run's samples, step by step",
    )


def _diff_norm(a: dict[str, Any], b: dict[str, Any]) -> float:
    xs, ys = a.get("sample") or [], b.get("sample") or []
    if len(xs) != len(ys) or not xs:
        return math.inf
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(xs, ys, strict=True)))


_STATE_OF = {
    "Adam": "moments and step count",
    "AdamW": "moments and step count",
    "SGD": "momentum buffers",
    "RMSprop": "square averages",
    "Adagrad": "sums of squares",
}


def _fmt_lr(lrs: list[float]) -> str:
    return ", ".join(f"{x:.4g}" for x in lrs)


def diagnose(
    u: dict[int, dict[str, Any]],
    r: dict[int, dict[str, Any]],
    step: int,
    same_samples: bool,
    opt: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None),
) -> list[str]:
    """Likely causes of the first difference, at global step `step` (relaunch record r); `opt`:
    the optimizer records (class, learning rates, state digest before the step) of U and R."""
    ur, rr = u[step], r[step]
    uo, ro = opt
    causes = []
    same_grads = rr["grad"]["digest"] == ur["grad"]["digest"]
    if not same_samples:
        causes.append(SAMPLER_CAUSE)
    elif not same_grads:
        causes.append(RNG_CAUSE)
    normal = _diff_norm(ur["post"], ur["pre"]) or math.inf
    jump = _diff_norm(rr["post"], ur["post"]) / normal
    if uo is not None and ro is not None:
        if uo.get("lr") != ro.get("lr"):
            causes.append(
                f"learning-rate schedule not restored: the LR at step {step} was "
                f"{_fmt_lr(ro.get('lr') or [])}, the uninterrupted run's "
                f"{_fmt_lr(uo.get('lr') or [])} "
                "(the scheduler's state was not saved or not loaded)"
            )
        if uo.get("state") != ro.get("state"):
            kind = str(ro.get("class") or uo.get("class") or "optimizer")
            what = _STATE_OF.get(kind, "state")
            seen = "was empty (fresh)" if not ro.get("state_tensors") else "differs"
            causes.append(
                f"optimizer state not restored: the {kind} {what} before step {step} {seen}, "
                f"the uninterrupted run's held {uo.get('state_tensors')} tensors"
            )
        if same_samples and same_grads and len(causes) == 0:
            causes.append(
                "same samples, gradients, learning rate and optimizer state, other update: "
                "an optimizer setting (momentum, weight decay, betas) differs after the resume"
            )
        return causes
    if same_grads or (jump >= JUMP_RATIO and same_samples):
        causes.append(
            f"optimizer state not restored: the first update after the resume is off by "
            f"{jump:.1f}x a normal update"
        )
    return causes


def matches_uninterrupted(
    reference: ScriptRun, relaunch: ScriptRun, offset: int, weights_restored: bool
) -> Check:
    name = "restart.matches_uninterrupted"
    if not weights_restored:
        return check(name, False, "the weights were not restored, nothing to compare")
    causes: list[str] = []
    first_diff: str = ""
    first_step: int | None = None
    compared = 0
    for rank in reference.ranks():
        u = _by_step(step_records(reference.observe_dir, rank))
        r = {rec["pstep"] + offset: rec for rec in step_records(relaunch.observe_dir, rank)}
        steps = sorted(s for s in r if s in u)
        compared = max(compared, len(steps))
        if not steps or max(r) < max(u):
            return check(
                name,
                False,
                f"rank {rank}: the relaunch stopped at step "
                f"{max(r, default=offset)} of {max(u)} ({failed_run_detail(relaunch)}); "
                f"expected it to reach step {max(u)}",
            )
        if max(r) > max(u):
            return check(
                name,
                False,
                f"rank {rank}: the relaunch (resumed after step {offset}) went on to step "
                f"{max(r)}; expected it to stop at step {max(u)} like the uninterrupted run "
                "(--steps); likely cause: --steps counted from the resume instead of from step 0",
            )
        bad = [s for s in steps if r[s]["post"]["digest"] != u[s]["post"]["digest"]]
        if bad and not first_diff:
            s0, s1 = bad[0], bad[-1]
            uf = _fetches_by_step(reference, rank, 0).get(s0)
            rf = _fetches_by_step(relaunch, rank, offset).get(s0)
            uo = optimizer_records(reference.observe_dir, rank).get(s0)
            ro = optimizer_records(relaunch.observe_dir, rank).get(s0 - offset)
            causes = diagnose(u, r, s0, uf == rf, (uo, ro))
            first_step = s0
            first_diff = (
                f"rank {rank}: parameters differ from the uninterrupted run's at {len(bad)} of "
                f"{len(steps)} steps, first at step {s0} (max |diff| "
                f"{max_abs_diff(r[s0]['post'], u[s0]['post']):.2g}), at step {s1} "
                f"{max_abs_diff(r[s1]['post'], u[s1]['post']):.2g}"
            )
    if first_diff:
        causes = causes or ["unknown"]
        facts = {"first_diff_step": first_step, "causes": causes}
        return check(name, False, f"{first_diff}{cause_text(causes)}", facts)
    return check(
        name,
        True,
        f"bit-identical to the uninterrupted run at all {compared} steps "
        f"after step {offset}, on every rank (expected at W=2)",
    )


def single_writer(reference: ScriptRun) -> Check:
    writers: dict[str, set[int]] = {}
    for event in save_events(reference.observe_dir, reference.ranks()):
        if event["event"] in ("save", "write", "rename") and isinstance(event.get("path"), str):
            writers.setdefault(event["path"], set()).add(event["rank"])
    if not writers:
        return check(
            "restart.single_writer", False, "no checkpoint file was written into --ckpt-dir"
        )
    shared = sorted(p for p, ranks in writers.items() if len(ranks) > 1)
    if shared:
        ranks = sorted(writers[shared[0]])
        return check(
            "restart.single_writer",
            False,
            f"{len(shared)} checkpoint paths written by several ranks, e.g. "
            f"{shared[0]} by ranks {ranks}; expected one writer per file; likely cause: every "
            "rank saves (concurrent writers race on one file)",
        )
    return check(
        "restart.single_writer", True, f"{len(writers)} checkpoint paths, each written by one rank"
    )

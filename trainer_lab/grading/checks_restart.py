"""Checks of the restart and torn-checkpoint phases, and the likely cause of a bad resume.

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
from trainer_lab.grading.contract import CKPT_EVERY, RESTART_KILLED_AFTER, TEAR_AFTER
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import fetches, save_events, step_lines, step_records
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


def _first_printed_step(run: ScriptRun) -> int | None:
    lines = step_lines(run.stdout_path(0)).lines
    return lines[0]["step"] if lines else None


def resume_checks(
    reference: ScriptRun, first: ScriptRun, relaunch: ScriptRun, expected: int, prefix: str
) -> tuple[int | None, str]:
    """(step resumed after, evidence) shared by the restart and torn phases."""
    resumed = resumed_after(reference, relaunch)
    printed = _first_printed_step(relaunch)
    events = save_events(first.observe_dir, first.ranks())
    renamed = {e.get("src") for e in events if e["event"] == "rename"}
    saves = sorted(
        {
            (e["pstep"], e["path"])
            for e in events
            if e["event"] in ("save", "rename") and e["path"] not in renamed
        }
    )
    saved = ", ".join(f"{p} after step {s}" for s, p in saves[-3:]) or "none"
    if resumed is None:
        where = "its parameters before the first step match no step of the uninterrupted run"
        if not step_records(relaunch.observe_dir, 0):
            where = f"it made no optimizer step ({failed_run_detail(relaunch)})"
        return None, f"{prefix}: {where}; checkpoint writes seen: {saved}"
    text = f"{prefix}: resumed from the weights after step {resumed} (expected {expected})"
    if printed is not None:
        text += f", first step line {printed}"
    return resumed, f"{text}; checkpoint writes seen: {saved}"


def restart_checks(reference: ScriptRun, killed: ScriptRun, relaunch: ScriptRun) -> list[Check]:
    expected = (RESTART_KILLED_AFTER - 1) // CKPT_EVERY * CKPT_EVERY
    was_killed = any(
        e["event"] == "killed" for e in save_events(killed.observe_dir, killed.ranks())
    )
    if not was_killed:
        detail = f"rank 1 never reached step {RESTART_KILLED_AFTER}: {failed_run_detail(killed)}"
        names = ("resumes_at_checkpoint", "no_replay_or_skip", "matches_uninterrupted")
        return [check(f"restart.{n}", False, detail) for n in names] + [single_writer(reference)]
    prefix = f"rank 1 SIGKILLed after step {RESTART_KILLED_AFTER}, relaunched"
    resumed, evidence = resume_checks(reference, killed, relaunch, expected, prefix)
    printed = _first_printed_step(relaunch)
    ok = resumed == expected and (printed is None or printed == expected + 1)
    checks = [check("restart.resumes_at_checkpoint", ok, evidence)]
    offset = resumed if resumed is not None else expected
    checks.append(no_replay_or_skip(reference, relaunch, offset))
    checks.append(matches_uninterrupted(reference, relaunch, offset, resumed is not None))
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
                return check(
                    "restart.no_replay_or_skip",
                    False,
                    f"rank {rank}, step {step} (resumed after {offset}): fetched {r[step]}, the "
                    f"uninterrupted run {u[step]}: {what}; likely cause: {SAMPLER_CAUSE}",
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


def diagnose(
    u: dict[int, dict[str, Any]], r: dict[int, dict[str, Any]], step: int, same_samples: bool
) -> list[str]:
    """Likely causes of the first difference, at global step `step` (relaunch record r)."""
    ur, rr = u[step], r[step]
    causes = []
    if not same_samples:
        causes.append(SAMPLER_CAUSE)
    elif rr["grad"]["digest"] != ur["grad"]["digest"]:
        causes.append(RNG_CAUSE)
    normal = _diff_norm(ur["post"], ur["pre"]) or math.inf
    jump = _diff_norm(rr["post"], ur["post"]) / normal
    if rr["grad"]["digest"] == ur["grad"]["digest"] or (jump >= JUMP_RATIO and same_samples):
        causes.append(
            f"optimizer state not restored: the first update after the resume is off by "
            f"{jump:.1f}x a normal update (fresh Adam moments and step count)"
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
                f"{max(r, default=offset)} of {max(u)} ({failed_run_detail(relaunch)})",
            )
        bad = [s for s in steps if r[s]["post"]["digest"] != u[s]["post"]["digest"]]
        if bad and not first_diff:
            s0, s1 = bad[0], bad[-1]
            uf = _fetches_by_step(reference, rank, 0).get(s0)
            rf = _fetches_by_step(relaunch, rank, offset).get(s0)
            causes = diagnose(u, r, s0, uf == rf)
            first_diff = (
                f"rank {rank}: parameters differ from the uninterrupted run's at {len(bad)} of "
                f"{len(steps)} steps, first at step {s0} (max |diff| "
                f"{max_abs_diff(r[s0]['post'], u[s0]['post']):.2g}), at step {s1} "
                f"{max_abs_diff(r[s1]['post'], u[s1]['post']):.2g}"
            )
    if first_diff:
        return check(name, False, f"{first_diff}; likely cause: {'; '.join(causes) or 'unknown'}")
    return check(
        name,
        True,
        f"bit-identical to the uninterrupted run at all {compared} steps "
        f"after step {offset}, on every rank (expected at W=2)",
    )


def single_writer(reference: ScriptRun) -> Check:
    writers: dict[str, set[int]] = {}
    for event in save_events(reference.observe_dir, reference.ranks()):
        if event["event"] in ("save", "rename") and isinstance(event.get("path"), str):
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
            f"{shared[0]} by ranks {ranks} (concurrent writers race on one file)",
        )
    return check(
        "restart.single_writer", True, f"{len(writers)} checkpoint paths, each written by one rank"
    )


def torn_checks(reference: ScriptRun, torn: ScriptRun, relaunch: ScriptRun) -> list[Check]:
    events = save_events(torn.observe_dir, torn.ranks())
    tears = [e for e in events if e["event"] == "torn"]
    if not tears:
        detail = (
            f"no checkpoint save into --ckpt-dir after step {TEAR_AFTER} was seen: "
            f"{failed_run_detail(torn)}"
        )
        return [
            check("torn.previous_checkpoint_used", False, detail),
            check("torn.finishes", False, detail),
        ]
    tear = tears[0]
    expected = TEAR_AFTER - CKPT_EVERY
    prefix = (
        f"killed while writing {tear['path']} after step {tear['pstep']} "
        f"({tear.get('bytes')} of {tear.get('of')} bytes written), relaunched"
    )
    resumed, evidence = resume_checks(reference, torn, relaunch, expected, prefix)
    used = check("torn.previous_checkpoint_used", resumed == expected, evidence)
    u_last = max((r["pstep"] for r in step_records(reference.observe_dir, 0)), default=0)
    r_steps = step_records(relaunch.observe_dir, 0)
    reached = (resumed or 0) + len(r_steps)
    ok = relaunch.status == "ok" and resumed is not None and reached >= u_last
    detail = f"relaunch: {failed_run_detail(relaunch)}, reached step {reached} of {u_last}"
    return [used, check("torn.finishes", ok, detail)]

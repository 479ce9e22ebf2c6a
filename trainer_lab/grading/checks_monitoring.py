"""The monitoring phase's checks (torch-free): rank 0's step lines of the W=2 run carry >= 3 named
phases that add up to the step time. Every sample read of the run waits a known time first
(usercode/known_work.py), so a timer that leaves the data phase out misses a large share of the
step, not a few percent inside the margin. A run that did not finish fails both checks with its
cause: the lines before a hang or a crash are not a run's monitoring.
"""

from __future__ import annotations

import math

from trainer_lab.grading.checks_run import failed_run_detail
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import step_lines
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

PHASES_MARGIN = 0.10  # the phases' total against the step time


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def named_phases(lines: list[dict]) -> tuple[bool, str]:
    bad = None
    for line in lines:
        phases = line.get("phases")
        if not isinstance(phases, dict) or len(phases) < 3:
            bad = f"step {line['step']}: phases is {str(phases)[:80]}"
            break
        if not all(_number(v) and v >= 0 for v in phases.values()):
            bad = f"step {line['step']}: a phase time is not a number >= 0: {phases}"
            break
    if bad:
        return False, bad + "; expected >= 3 named phases, each a number of seconds >= 0"
    names = sorted(lines[0]["phases"])
    return True, f"{len(names)} phases on all {len(lines)} step lines: {', '.join(names)}"


def phase_names(lines: list[dict]) -> list[str]:
    """The phase names the step lines log (named_phases' fact): every line's when all lines have
    good phases (sorted), else those of the first line named_phases stops at (in its order)."""
    for line in lines:
        phases = line.get("phases")
        if not isinstance(phases, dict) or len(phases) < 3:
            return [str(n) for n in phases] if isinstance(phases, dict) else []
        if not all(_number(v) and v >= 0 for v in phases.values()):
            return [str(n) for n in phases]
    return sorted(str(n) for n in lines[0]["phases"]) if lines else []


def phases_add_up(lines: list[dict]) -> tuple[bool, str]:
    timed = [
        line
        for line in lines
        if isinstance(line.get("phases"), dict)
        and all(_number(v) for v in line["phases"].values())
        and _number(line.get("step_time"))
        and line["step_time"] > 0
    ]
    if not timed:
        return False, "no step line has phases and step_time"
    phase_total = sum(sum(line["phases"].values()) for line in timed)
    step_total = sum(line["step_time"] for line in timed)
    ratio = phase_total / step_total
    worst = min(
        (sum(line["phases"].values()) / line["step_time"] for line in timed),
        key=lambda r: -abs(r - 1),
    )
    ok = abs(ratio - 1) <= PHASES_MARGIN and len(timed) == len(lines)
    missing = len(lines) - len(timed)
    detail = (
        f"phases add up to {ratio:.1%} of the step time over {len(timed)} steps "
        f"(worst step {worst:.0%})" + (f"; {missing} lines lack step_time" if missing else "")
    )
    if not ok:
        detail += (
            f"; expected every line to have step_time and the phases within "
            f"{PHASES_MARGIN:.0%} of it; likely cause: a part of the step is not timed, or timed "
            "twice (the data phase: every sample read waits, see the contract)"
        )
    return ok, detail


def monitoring_checks(run: ScriptRun) -> list[Check]:
    lines = step_lines(run.stdout_path(0)).lines
    names = ("monitoring.named_phases", "monitoring.phases_add_up")
    if not lines:
        detail = f"no step lines from rank 0 ({failed_run_detail(run)})"
        return [check(name, False, detail) for name in names]
    checks = []
    for name, (ok, detail) in zip(names, (named_phases(lines), phases_add_up(lines)), strict=True):
        if run.status != "ok":
            ok, detail = False, f"{failed_run_detail(run)}; {len(lines)} step lines: {detail}"
        facts = {"phases": phase_names(lines)} if name == "monitoring.named_phases" else None
        checks.append(check(name, ok, detail, facts))
    return checks

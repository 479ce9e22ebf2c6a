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
from trainer_lab.usercode.evidence import fetches, step_lines, step_records
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.known_work import COVER
from trainer_lab.usercode.verdict import check

PHASES_MARGIN = 0.10  # the phases' total against the step time


def known_waits(run: ScriptRun) -> tuple[float, float]:
    """(seconds rank 0's sample reads waited, seconds its optimizer steps waited) over the run:
    the waits the grader puts on each read and each step (known_work.py); (0, 0) without them."""
    data = run.launch.data
    if data is None:
        return 0.0, 0.0
    reads = len(fetches(run.observe_dir, 0))
    steps = len(step_records(run.observe_dir, 0))
    return reads * data.read_wait_s, steps * data.step_wait_s


def waits_problem(lines: list[dict], read_s: float, step_s: float) -> str | None:
    """Why the step lines do not cover the known waits (None when they do): the step times add
    up to at least COVER of the reads' and the optimizer steps' waits, and one phase holds at
    least COVER of the reads' wait and one (maybe the same) of the optimizer steps'."""
    step_total = sum(line["step_time"] for line in lines)
    names = {name for line in lines for name in line["phases"]}
    per_phase = {n: sum(float(line["phases"].get(n, 0.0)) for line in lines) for n in names}
    largest = max(per_phase.values(), default=0.0)
    if step_total < COVER * (read_s + step_s):
        return (
            f"the step times add up to {step_total:.3f} s, but the sample reads alone waited "
            f"{read_s:.3f} s and the optimizer steps {step_s:.3f} s (the grader's known work); "
            "likely cause: the step timer starts after the batch is read, or step_time is not "
            "measured (the sum of phases that leave the reads untimed)"
        )
    for what, wait in (("the sample reads", read_s), ("the optimizer steps", step_s)):
        if wait > 0 and not any(total >= COVER * wait for total in per_phase.values()):
            return (
                f"{what} waited {wait:.3f} s over the run, and no phase holds that much (the "
                f"largest: {largest:.3f} s); likely cause: that work is timed in no phase (the "
                "timer starts after it, or step_time is the phases' own sum), or the phases are "
                "shares of the step time instead of timed where the work happens"
            )
    return None


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


def phases_add_up(lines: list[dict], waits: tuple[float, float] = (0.0, 0.0)) -> tuple[bool, str]:
    """The phases add up to the step time within PHASES_MARGIN, and (waits_problem) the step
    times and the phases cover the `waits` the grader put on the run (reads, optimizer steps)."""
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
    uncovered = waits_problem(timed, *waits) if ok else None
    if uncovered is not None:
        return False, f"{detail}; {uncovered}"
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
    verdicts = (named_phases(lines), phases_add_up(lines, known_waits(run)))
    for name, (ok, detail) in zip(names, verdicts, strict=True):
        if run.status != "ok":
            ok, detail = False, f"{failed_run_detail(run)}; {len(lines)} step lines: {detail}"
        facts = {"phases": phase_names(lines)} if name == "monitoring.named_phases" else None
        checks.append(check(name, ok, detail, facts))
    return checks

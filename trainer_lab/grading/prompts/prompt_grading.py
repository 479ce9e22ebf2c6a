"""The grading run every catalogue prompt shares (eval, fsdp2, preemption, biotech): one copy of
the steps, each prompt module supplies what differs.

    spec = PromptSpec(LAB, PHASES, CHECK_NAMES, SCRIPT_NAME, (FILES / "drill_data.py",),
                      PHASE_LAUNCHES, phase_checks)
    seed = draw_seed(seed)
    plans = launch_plans(seed)
    return grade_prompt(spec, script_path, out_dir, phases, seed=seed, plans=plans,
                        launch=lambda plan, script: to_launch(plan, ..., script, out_dir, seed),
                        observations=lambda runs: {"kill": plans["kill"].kill}, ...)

The steps: the phases asked for in the prompt's order; the script read and compiled (a syntax
error fails every check of those phases, naming the line); the workspace written (the script
beside the given files); the launches the phases need, with those they continue, run through the
grader's launcher; each phase's checks from the runs; the observations (the launches not run,
the limits, the prompt's own); a cancel recorded; the likely causes; result.json written.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.grading.contract import LaunchPlan
from trainer_lab.grading.outcome import Grading
from trainer_lab.result import Check
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun
from trainer_lab.usercode.limits import LIMITS_TEXT
from trainer_lab.usercode.source import read_script, syntax_error
from trainer_lab.usercode.verdict import begin, finish, not_compiled, write_workspace


@dataclass(frozen=True)
class PromptSpec:
    """What a prompt's grading is made of, apart from its launches."""

    lab: str
    phases: tuple[str, ...]
    check_names: Mapping[str, tuple[str, ...]]
    script_name: str
    given: tuple[Path, ...]  # files written beside the script (the dataset module)
    phase_launches: Mapping[str, tuple[str, ...]]  # phase -> the launches its checks read
    phase_checks: Callable[[str, Mapping[str, ScriptRun]], list[Check]]


def draw_seed(seed: int | None) -> int:
    """The grading's seed: the one given (a reproduced grading), else a fresh one."""
    return secrets.randbelow(2**31) if seed is None else seed


def needed_launches(
    spec: PromptSpec, chosen: Sequence[str], plans: Mapping[str, LaunchPlan]
) -> list[LaunchPlan]:
    """The launches the chosen phases read, and the ones they continue, in the plans' order."""
    needed = {name for phase in chosen for name in spec.phase_launches[phase]}
    needed |= {plans[name].continues for name in needed if plans[name].continues}  # type: ignore[misc]
    return [plans[name] for name in plans if name in needed]


def grade_prompt(
    spec: PromptSpec,
    script_path: Path,
    out_dir: Path,
    phases: Iterable[str],
    *,
    seed: int,
    plans: Mapping[str, LaunchPlan],
    launch: Callable[[LaunchPlan, Path], ScriptLaunch],
    observations: Callable[[Mapping[str, ScriptRun]], Mapping[str, Any]] = lambda runs: {},
    parallel: int = 2,
    on_progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> Grading:
    """Grade the script as the prompt's train.py; write out_dir/result.json. `launch(plan,
    script)` builds a plan's launch of the script in the workspace; `observations(runs)` adds
    the prompt's own observations."""
    from trainer_lab.grading.grader import likely_causes, run_launches

    chosen = [p for p in spec.phases if p in set(phases)]
    source = read_script(script_path)
    start = time.monotonic()
    result = begin(spec.lab, {"script": str(script_path), "phases": chosen}, 2, out_dir)
    result["seed"] = seed  # type: ignore[typeddict-unknown-key]
    bad = syntax_error(source, spec.script_name)
    if bad:
        not_compiled(result, [n for p in chosen for n in spec.check_names[p]], bad)
        return Grading(finish(result, out_dir, start), out_dir)
    workspace = out_dir / "workspace"
    write_workspace(workspace, {spec.script_name: source}, list(spec.given))
    script = workspace / spec.script_name
    runs, skipped = run_launches(
        needed_launches(spec, chosen, plans),
        lambda plan: launch(plan, script),
        parallel,
        on_progress,
        cancel,
    )
    result["launches"] = [runs[name].to_dict() for name in sorted(runs)]
    for phase in chosen:
        result["checks"].extend(spec.phase_checks(phase, runs))
    result["observations"] = {"not_run": skipped, "limits": LIMITS_TEXT, **observations(runs)}
    if cancel is not None and cancel.is_set():
        result["status"] = "cancelled"
    causes = likely_causes(result["checks"])
    return Grading(finish(result, out_dir, start, {"likely_causes": causes}), out_dir)


@dataclass(frozen=True)
class Launches:
    """A prompt's launches for one grading: the plans by name, how one is launched on the
    workspace's script, and the prompt's own observations of the runs."""

    plans: Mapping[str, LaunchPlan]
    launch: Callable[[LaunchPlan, Path], ScriptLaunch]
    observations: Callable[[Mapping[str, ScriptRun]], Mapping[str, Any]]


def prompt_grader(
    spec: PromptSpec, launches: Callable[[int, Path, float], Launches], timeout_s: float
) -> Callable[..., Grading]:
    """The prompt's grading function, `grade(script_path, out_dir, phases, *, parallel,
    on_progress, cancel, seed, timeout_s)`: the seed drawn (or the one given), then
    `launches(seed, out_dir, timeout_s)` and grade_prompt."""

    def grade(
        script_path: Path,
        out_dir: Path,
        phases: Iterable[str] = spec.phases,
        *,
        parallel: int = 2,
        on_progress: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        seed: int | None = None,
        timeout_s: float = timeout_s,
    ) -> Grading:
        drawn = draw_seed(seed)
        chosen = launches(drawn, out_dir, timeout_s)
        return grade_prompt(
            spec, script_path, out_dir, phases, seed=drawn, plans=chosen.plans,
            launch=chosen.launch, observations=chosen.observations,
            parallel=parallel, on_progress=on_progress, cancel=cancel,
        )  # fmt: skip

    return grade

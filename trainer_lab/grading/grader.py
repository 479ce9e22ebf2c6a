"""Grade a training script against the coding-round contract by running it (torch-free here).

    grading = grade_script(Path("train.py"), run_dir, phases=("skeleton",))

(The app calls trainer_lab.grading.grade, which imports this module when a grading runs.) The
script is copied with the given dataset module into `out_dir/workspace` (the cwd of every run);
the launches its phases need run through trainer_lab.usercode.harness, up to `parallel` at a time,
a relaunch after the run it continues; shared runs (the uninterrupted W=2 run) run once. The
outcome is a lab result (trainer_lab.result) with lab "mock-coding", one check per property, the
launches, and the likely causes of what failed. A script that does not compile is not run.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from trainer_lab.grading.checks_monitoring import monitoring_checks
from trainer_lab.grading.checks_restart import restart_checks
from trainer_lab.grading.checks_run import distributed_checks, skeleton_checks
from trainer_lab.grading.checks_torn import torn_checks
from trainer_lab.grading.contract import (
    CHECK_NAMES,
    DATASET_MODULE_FILE,
    DEFAULT_TIMEOUT_S,
    FILES,
    LAB,
    LAUNCHES,
    OTHER_DATA,
    PHASE_LAUNCHES,
    PHASES,
    SCRIPT_NAME,
    SKELETON_TIMEOUT_S,
    W2_REFERENCE,
    W3_REFERENCE,
    FaultPlan,
    LaunchPlan,
    fault_launches,
    fault_plan,
    tear_plans,
    tear_writes,
)
from trainer_lab.grading.data_plans import data_plan
from trainer_lab.grading.facts import causes_of, with_evidence_facts
from trainer_lab.grading.outcome import Grading
from trainer_lab.grading.stretch import (
    STRETCH_CHECK_NAMES,
    STRETCH_LAUNCHES,
    STRETCH_PHASE_LAUNCHES,
    STRETCH_PHASES,
    stretch_model_answer,
)
from trainer_lab.result import Check, LabResult, variant_dir
from trainer_lab.usercode import protocol
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.evidence import save_events, step_records, write_events
from trainer_lab.usercode.harness import Faults, ScriptLaunch, ScriptRun, run_script
from trainer_lab.usercode.limits import LIMITS_TEXT
from trainer_lab.usercode.source import read_script
from trainer_lab.usercode.source import syntax_error as _syntax_error
from trainer_lab.usercode.verdict import (
    begin,
    check,
    finish,
    not_compiled,
    write_workspace,
)

# The round's phases and the stretch phases (stretch.py), launches and checks together.
ALL_PHASES = (*PHASES, *STRETCH_PHASES)
ALL_LAUNCHES = {**LAUNCHES, **STRETCH_LAUNCHES}
ALL_PHASE_LAUNCHES = {**PHASE_LAUNCHES, **STRETCH_PHASE_LAUNCHES}
ALL_CHECK_NAMES = {**CHECK_NAMES, **STRETCH_CHECK_NAMES}


def syntax_error(source: str, name: str = SCRIPT_NAME) -> str | None:
    """`train.py:LINE: message` when the source does not compile (compiled, never run)."""
    return _syntax_error(source, name)


def prepare_workspace(source: str, workspace: Path) -> Path:
    write_workspace(workspace, {SCRIPT_NAME: source}, [FILES / DATASET_MODULE_FILE])
    return workspace / SCRIPT_NAME


def launches_for(phases: Iterable[str], faults: FaultPlan | None = None) -> list[LaunchPlan]:
    """The launches `phases` need, each once, in the order they start; with the kill and the
    tear of `faults` (None: the default plan's, LAUNCHES)."""
    launches = ALL_LAUNCHES if faults is None else {**ALL_LAUNCHES, **fault_launches(faults)}
    names: list[str] = []
    for phase in phases:
        for name in ALL_PHASE_LAUNCHES[phase]:
            chain = [name]
            while ALL_LAUNCHES[chain[-1]].continues:
                chain.append(ALL_LAUNCHES[chain[-1]].continues)  # type: ignore[arg-type]
            names.extend(n for n in reversed(chain) if n not in names)
    heads = {ALL_LAUNCHES[n].continues for n in names} | {ALL_LAUNCHES[n].replays for n in names}
    # the one-process run first (when it does not finish nothing else runs), then those with a
    # relaunch after them: the chains finish sooner
    return sorted(
        (launches[n] for n in names), key=lambda p: (p.name != "single", p.name not in heads)
    )


def prepare_references(plans: Iterable[LaunchPlan], out_dir: Path) -> dict[str, Path]:
    """A workspace per stretch model answer some plan runs as a reference, out_dir/reference-P."""
    found = {}
    for phase in sorted({p.reference for p in plans if p.reference}):
        found[phase] = prepare_workspace(
            stretch_model_answer(phase), out_dir / f"reference-{phase}"
        )
    return found


def plan_env(plan: LaunchPlan) -> tuple[tuple[str, str], ...]:
    env: list[tuple[str, str]] = []
    if plan.probes:
        env.append((protocol.PROBES_ENV, "1"))
        if plan.inf_at_step is not None:
            env.append((protocol.INF_AT_ENV, str(plan.inf_at_step)))
    if plan.dropout_off:
        env.append((protocol.NO_DROPOUT_ENV, "1"))
    return tuple(env)


def launch_for(
    plan: LaunchPlan,
    script: Path,
    out_dir: Path,
    timeout_s: float,
    *,
    seed: int,
    ckpt_of: str,
    data: DataPlan | None,
    extra_args: tuple[str, ...] = (),
    faults: Faults | None = None,
) -> ScriptLaunch:
    """The ScriptLaunch of `plan` (every round's launches are built here): the round's arguments,
    then `extra_args`, then the plan's own; its checkpoint dir is launch `ckpt_of`'s (a relaunch
    names the run it continues), named by a digest, not the launch: a script must not learn from
    its --ckpt-dir which launch (the reference, the other data) it is in. `faults`: the plan's
    kill and file-level tear unless given."""
    key = f"{seed}/{ckpt_of}".encode()
    ckpt = out_dir / "ckpt" / hashlib.sha256(key).hexdigest()[:12]
    if faults is None:
        kill_rank, kill_after = plan.kill if plan.kill else (None, None)
        faults = Faults(
            kill_rank,
            kill_after,
            tear_write_after=plan.tear_after_step,
            tear_write=plan.tear_write,
            tear_rank=plan.tear_rank,
        )
    args = ("--steps", str(plan.steps), "--ckpt-dir", str(ckpt), "--ckpt-every")
    args += (str(plan.ckpt_every), *extra_args, *plan.extra_args)
    return ScriptLaunch(
        name=plan.name,
        script=script,
        args=args,
        world_size=plan.world_size,
        run_dir=variant_dir(out_dir, plan.name),
        ckpt_dir=ckpt,
        timeout_s=timeout_s,
        faults=faults,
        data=data,
        launcher="torchrun" if plan.under_torchrun else None,
        watch_progress=True,  # a hang ends once no rank makes progress, not at the deadline
        extra_env=plan_env(plan),
    )


def to_launch(
    plan: LaunchPlan,
    script: Path,
    out_dir: Path,
    timeout_s: float,
    references: dict[str, Path] | None = None,
    seed: int = 0,
) -> ScriptLaunch:
    if plan.reference:
        script = (references or {})[plan.reference]
    if plan.name == "single":  # fail fast: nothing else runs when this one does not finish
        timeout_s = min(timeout_s, SKELETON_TIMEOUT_S)
    data = data_plan(plan, ALL_LAUNCHES, out_dir, seed)
    return launch_for(
        plan, script, out_dir, timeout_s, seed=seed, ckpt_of=plan.continues or plan.name, data=data
    )


def save_write_counts(run: ScriptRun, after_step: int) -> dict[int, int]:
    """Rank -> files it wrote in the save after step `after_step` (the file-level write
    records of a finished run)."""
    counts = {rank: 0 for rank in run.ranks()}
    for event in save_events(run.observe_dir, run.ranks()):
        if event["event"] == "write" and event.get("pstep") == after_step:
            counts[event["rank"]] = counts.get(event["rank"], 0) + 1
    return counts


def save_writes(run: ScriptRun, after_step: int, prefer: int = 0) -> tuple[int, int]:
    """(rank, files it wrote) for the rank that wrote the most files in the save after step
    `after_step`; among ranks that wrote as many, `prefer` if it is one, else the lowest."""
    counts = save_write_counts(run, after_step)
    rank = max(counts, key=lambda r: (counts[r], r == prefer, -r))
    return rank, counts[rank]


def extra_tears(
    runs: dict[str, ScriptRun], chosen: Iterable[str], faults: FaultPlan
) -> list[LaunchPlan]:
    """Once the uninterrupted W=2 run shows which ranks write how many files in the save after
    the tear step: a tear of each further file (the first is torn on every rank by the "tear"
    launch from the start), on the rank that writes the most; and when several ranks write
    that save, a tear of the plan's rank's first file alone ("tear-1": its peers' saves
    complete, so ranks that each take their own newest file disagree), on a rank that does not
    commit the save (committing_rank) where another writes: a commit that does not wait for its
    peers' files then marks a torn save complete."""
    if "torn" not in chosen or "w2" not in runs:
        return []
    counts = save_write_counts(runs["w2"], faults.tear_after)
    rank, count = save_writes(runs["w2"], faults.tear_after, faults.tear_rank)
    plans = [
        plan for k in tear_writes(count) if k > 1 for plan in tear_plans(k, rank, faults.tear_after)
    ]
    writers = [r for r, n in counts.items() if n > 0]
    if len(writers) > 1:
        # a rank that does not commit: its peers may commit before its files are complete
        others = [r for r in writers if r != committing_rank(runs["w2"], faults.tear_after)]
        alone = faults.tear_rank if faults.tear_rank in others else (others or writers)[0]
        plans.extend(tear_plans(1, alone, faults.tear_after))
    return plans


def committing_rank(run: ScriptRun, after_step: int) -> int | None:
    """The rank that commits the save after step `after_step`: the one with more file events in
    it (writes, empty markers, renames) than every other rank, as a rank that writes its shard
    and then the commit does; None when no rank stands out (each rank's file is its own)."""
    counts: dict[int, int] = {}
    for event in save_events(run.observe_dir, run.ranks()):
        if event["event"] in ("write", "create", "rename") and event.get("pstep") == after_step:
            counts[event["rank"]] = counts.get(event["rank"], 0) + 1
    ranked = sorted(counts.values(), reverse=True)
    if len(ranked) < 2 or ranked[0] == ranked[1]:
        return None
    return max(counts, key=lambda r: counts[r])


def run_launches(
    plans: list[LaunchPlan],
    make: Callable[[LaunchPlan], ScriptLaunch],
    parallel: int,
    on_progress: Callable[[str], None] | None,
    cancel: threading.Event | None,
    more: Callable[[dict[str, ScriptRun]], list[LaunchPlan]] | None = None,
) -> tuple[dict[str, ScriptRun], str | None]:
    """Run the plans (a relaunch after the run it continues; an exclusive plan with no other
    run beside it); `more` adds plans once a run is done. When the one-process run does not
    finish, the others are stopped and the rest not started: (runs, why the rest was not run)."""
    runs: dict[str, ScriptRun] = {}
    waiting = list(plans)
    stop = threading.Event()  # ours: the user's cancel, or the fail-fast stop
    skipped: str | None = None
    added = False
    with ThreadPoolExecutor(max(1, parallel)) as pool:
        active: dict[Future[ScriptRun], tuple[str, bool]] = {}  # -> (name, exclusive)
        while waiting or active:
            for plan in list(waiting):
                alone = plan.exclusive or any(solo for _, solo in active.values())
                if skipped is not None:
                    waiting.remove(plan)
                elif alone and active:
                    continue  # an exclusive run (a timing) runs with no other beside it
                elif all(d is None or d in runs for d in (plan.continues, plan.replays)):
                    waiting.remove(plan)
                    if on_progress:
                        world = f"W={plan.world_size}" if plan.world_size else "one process"
                        on_progress(f"run {plan.name} ({world}, {plan.steps} steps)")
                    future = pool.submit(run_script, make(plan), stop)
                    active[future] = (plan.name, plan.exclusive)
            if not active:
                break
            done, _ = wait(active, timeout=0.2, return_when=FIRST_COMPLETED)
            if cancel is not None and cancel.is_set():
                stop.set()
            for future in done:
                name, _ = active.pop(future)
                runs[name] = future.result()
                if on_progress:
                    on_progress(f"{name}: {runs[name].summary()}")
                if name == "single" and runs[name].status == "timeout":
                    skipped = f"the one-process run did not finish ({runs[name].summary()})"
                    stop.set()
                if more is not None and not added and name == "w2":
                    added = True
                    waiting.extend(more(runs))
    return runs, skipped


def _stepless(names: Iterable[str], runs: dict[str, ScriptRun]) -> list[str]:
    """The launches among `names` that ran the user's script, exited 0 and made no optimizer
    step."""
    return [
        n
        for n in names
        if n in runs
        and n != OTHER_DATA
        and not (n in ALL_LAUNCHES and ALL_LAUNCHES[n].reference)  # a model answer's
        and runs[n].status == "ok"
        and not step_records(runs[n].observe_dir, 0)
    ]


def no_optimizer_step(phase: str, runs: dict[str, ScriptRun]) -> str | None:
    """Why the phase cannot pass when its runs that exited 0 made no torch.optim step. The
    text is the grading's, not the phase's (it names every such launch), so that phases failing
    for it quote one reason, shown once."""
    names = [
        n
        for n in ALL_PHASE_LAUNCHES[phase]
        if n in runs and n != OTHER_DATA and not ALL_LAUNCHES[n].reference
    ]
    clean = [n for n in names if runs[n].status == "ok"]
    if not clean or any(step_records(runs[n].observe_dir, 0) for n in clean):
        return None
    every = _stepless(sorted(runs), runs)
    return (
        f"no optimizer step seen ({', '.join(every)} exited 0 without one); expected a "
        "torch.optim optimizer step per training step (the contract: the grader watches them); "
        "likely cause: the parameters are not updated by a torch.optim optimizer"
    )


def not_run(phase: str, why: str) -> list[Check]:
    return [
        check(name, False, f"not run: {why}", {"not_run": True}) for name in ALL_CHECK_NAMES[phase]
    ]


def gate(checks: list[Check], why: str) -> list[Check]:
    """Every check fails for `why`; what each saw stays in its detail, before the likely cause
    (and in its facts' causes, the gate's alone)."""
    head, _, cause = why.partition("; likely cause: ")
    gated = []
    for c in checks:
        seen = c["detail"].split("; likely cause: ")[0]
        facts = {**c.get("facts", {}), "no_optimizer_step": True, "evidence": head}
        facts["causes"] = [cause] if cause else []  # the gate's, not what the check guessed
        gated.append(
            check(c["name"], False, f"{head}; observed: {seen}; likely cause: {cause}", facts)
        )
    return gated


def phase_checks(phase: str, runs: dict[str, ScriptRun]) -> list[Check]:
    if phase in STRETCH_PHASES:
        from trainer_lab.grading.checks_stretch import stretch_checks

        return stretch_checks(phase, runs)
    if phase == "skeleton":
        return skeleton_checks(runs["single"], runs[OTHER_DATA])
    if phase == "distributed":
        return distributed_checks([runs["w2"], runs["w3"]], runs[W3_REFERENCE], runs[W2_REFERENCE])
    if phase == "restart":
        return restart_checks(runs["w2"], runs["kill"], runs["resume"])
    if phase == "torn":
        tears = [
            ("tear", "tear-resume"),
            *sorted((n, f"{n}-resume") for n in runs if n.startswith("tear-") and "-res" not in n),
        ]
        return torn_checks(
            runs["w2"], [(runs[t], runs[r]) for t, r in tears if t in runs and r in runs]
        )
    return monitoring_checks(runs["w2"])


def judge_phase(
    phase: str, runs: dict[str, ScriptRun], skipped: str | None, shared: list[str] | None = None
) -> list[Check]:
    """The phase's checks; why the whole phase fails, when it does, is added to `shared` (every
    check quotes it: a display shows it once)."""
    missing = [n for n in ALL_PHASE_LAUNCHES[phase] if n not in runs]
    if missing:
        return not_run(phase, skipped or f"launches {missing} did not run")
    why = no_optimizer_step(phase, runs)
    checks = phase_checks(phase, runs)
    if why and shared is not None:
        shared.append(why.partition("; likely cause: ")[0])  # what gate() puts first
    return gate(checks, why) if why else checks


def likely_causes(checks: list[Check]) -> list[str]:
    """The causes the failed checks name, each once (trainer_lab.grading.facts.causes_of: the
    check's facts where it set them, else what its detail names)."""
    causes: list[str] = []
    for c in checks:
        causes += [n for n in causes_of(c) if n not in causes]
    return causes


def grade_script(
    script_path: Path,
    out_dir: Path,
    phases: Iterable[str] = PHASES,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    parallel: int = 2,
    on_progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    seed: int | None = None,
) -> Grading:
    """Grade the script at script_path; write out_dir/result.json and return it as a Grading.
    `phases` may name the stretch phases too (stretch.py). `seed` draws the fault plan (which
    rank is killed after which step, which rank's save is torn alone) and the samples every
    launch reads: the same seed, the same grading; None draws a fresh one. The seed used is
    the result's "seed". Raises ScriptError when the file cannot be read."""
    chosen = [p for p in ALL_PHASES if p in set(phases)]
    source = read_script(script_path)
    start = time.monotonic()
    faults = fault_plan(seed)
    result = begin(LAB, {"script": str(script_path), "phases": chosen}, 2, out_dir)
    result["seed"] = faults.seed  # type: ignore[typeddict-unknown-key]
    bad_syntax = syntax_error(source)
    if bad_syntax:
        names = [name for phase in chosen for name in ALL_CHECK_NAMES[phase]]
        not_compiled(result, names, bad_syntax)
        return _finish(result, out_dir, start)
    script = prepare_workspace(source, out_dir / "workspace")
    plans = launches_for(chosen, faults)
    references = prepare_references(plans, out_dir)
    runs, skipped = run_launches(
        plans,
        # the samples every launch reads come from the grading's seed too (data_plans.py)
        lambda plan: to_launch(plan, script, out_dir, timeout_s, references, faults.seed),
        parallel,
        on_progress,
        cancel,
        lambda done: extra_tears(done, chosen, faults),
    )
    result["launches"] = [runs[name].to_dict() for name in sorted(runs)]
    for run in runs.values():  # the lab contract's per-rank events, per launch
        stdout = {rank: run.stdout_path(rank) for rank in run.ranks()}
        write_events(run.run_dir, run.observe_dir, stdout)
    phase_times = {}
    shared: list[str] = []
    for phase in chosen:
        if phase != "skeleton" and skipped is not None:
            result["checks"].extend(not_run(phase, f"{skipped}; later phases were not run"))
            continue
        result["checks"].extend(judge_phase(phase, runs, skipped, shared))
        phase_times[phase] = round(
            sum(runs[p.name].duration_s for p in launches_for([phase]) if p.name in runs), 2
        )
    result["observations"] = {
        "not_run": skipped,
        "launch_seconds": {n: round(r.duration_s, 2) for n, r in runs.items()},
        "phase_launch_seconds": phase_times,
        "shared_reasons": list(dict.fromkeys(shared)),
        "fault_plan": faults.to_dict(),
        "limits": LIMITS_TEXT,
    }
    if cancel is not None and cancel.is_set():
        result["status"] = "cancelled"
    return _finish(result, out_dir, start, hang_causes(runs))


def hang_causes(runs: dict[str, ScriptRun]) -> list[str]:
    """The likely causes of the runs stopped as hangs (no rank made progress): the check
    details quote such a run's summary, which names its cause without "likely cause: "."""
    causes: list[str] = []
    for name in sorted(runs):
        stall = runs[name].stall
        if stall is not None and stall.likely_cause() not in causes:
            causes.append(stall.likely_cause())
    return causes


def _finish(result: LabResult, out_dir: Path, start: float, first: Iterable[str] = ()) -> Grading:
    result["checks"] = [with_evidence_facts(c) for c in result["checks"]]
    causes = list(first)
    causes += [c for c in likely_causes(result["checks"]) if c not in causes]
    return Grading(finish(result, out_dir, start, {"likely_causes": causes}), out_dir)

"""The preemption round: SIGTERM on every rank, the ranks agree, save and exit within a grace
period, the requeued job continues bit for bit, and a second SIGTERM during the save corrupts
nothing (torch-free; its given files are in preempt_files/).

    grading = grade_preemption(Path("train.py"), run_dir, phases=("stop",))

Graded by the coding round's harness: the launches run through grader.run_launches (the usercode
runner, the same limits), the SIGTERMs are the harness's fault (usercode/sigterm.py), the checks
are checks_preempt.py's, the result a lab result like the DDP round's.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from trainer_lab.grading.contract import LaunchPlan
from trainer_lab.grading.data_plans import group_seed
from trainer_lab.grading.graded_table import graded_table
from trainer_lab.grading.prompts.checks_preempt import (
    again_checks,
    facts,
    requeue_checks,
    stop_checks,
    straight_checks,
)
from trainer_lab.grading.prompts.prompt_grading import Launches, PromptSpec, prompt_grader
from trainer_lab.result import Check
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.harness import Faults, ScriptLaunch, ScriptRun
from trainer_lab.usercode.verdict import check

FILES = Path(__file__).parent / "preempt_files"
LAB = "mock-coding-preemption"
SCRIPT_NAME = "train.py"
STEPS = 12
CKPT_EVERY = 4
TERM_AFTER = 6  # not a multiple of CKPT_EVERY: the checkpoint at the stop is the signal's
# "term-late": the other rank first, the late rank's SIGTERM only after its step TERM_AFTER +
# LATE_BY, past the steps the ranks may stop after (TERM_AFTER or TERM_AFTER + 1): a rank stops in
# time there only when another told it (no rule on a rank's own timing agrees in both launches)
LATE_BY = 2
GRACE_S = 5.0
TIMEOUT_S = 60.0  # per launch

PHASES = ("stop", "requeue", "again")
CHECK_NAMES: dict[str, tuple[str, ...]] = {
    "stop": ("stop.exits_0_in_grace", "stop.stop_together"),
    "requeue": (
        "requeue.resumes_where_stopped",
        "requeue.bit_for_bit",
        "requeue.drill_data_order",
        "requeue.saves_every_c",
    ),
    "again": ("again.exits_0_in_grace", "again.resumes_complete"),
}

# phase -> its row of the "How it is graded" table (trainer_lab.grading.graded_table)
GRADED: dict[str, str] = {
    "stop": f"""\
W=2, N={STEPS}, C={CKPT_EVERY}, twice: SIGTERM reaches one rank right after step
{TERM_AFTER}, the other at its next action (a read, a collective, a step, a save);
then the other rank first, and this one only after step {TERM_AFTER + LATE_BY}. Each time
every rank stops after the same step ({TERM_AFTER} or {TERM_AFTER + 1}) and returns exit 0
within {GRACE_S:.0f} s of its SIGTERM""",
    "requeue": f"""\
the same command again on DIR: it starts from the parameters the preempted run
stopped with, makes the steps left, and every rank's final parameters equal an
uninterrupted run's bit for bit (the same samples, the same dropout masks). That
uninterrupted run (W=2, N={STEPS}, C={CKPT_EVERY}) reads drill_data's order at every step
(each rank its share of epoch_order(e)'s global batch) and writes a checkpoint into
DIR after every C-th step ({", ".join(map(str, range(CKPT_EVERY, STEPS + 1, CKPT_EVERY)))})""",
    "again": f"""\
as "stop" (first run), and a second SIGTERM comes midway through each rank's first
write into DIR after its first (a torch.save, a file object, any file): every rank
still exits 0 within {GRACE_S:.0f} s, and the relaunch starts from the newest
complete checkpoint (a cut-short save is no checkpoint)""",
}

CONTRACT = f"""\
Make this trainer survive preemption, in one file, train.py.

Given: drill_data.py: `TrainSet()` (DATASET_SIZE samples), item i is (i, x, label): FEATURES
features, an int64 class label; `epoch_order(e)`: the order of epoch e (its docstring says how
the global batches and the ranks' shares are cut from it; the remainder is dropped). Use
drill_data.BATCH_SIZE samples per rank per step (import it). The model has dropout; seed its
initialization (runs are compared bit for bit). Use a torch.optim optimizer.

Your script must:
  1. run as `python train.py --steps N --ckpt-dir DIR --ckpt-every C` and under
     `torchrun --nproc-per-node W` (gloo on CPU), train data parallel (replicas identical) in
     drill_data's order until global step N, save a checkpoint into DIR after every C-th
     step, and resume by itself from the newest complete checkpoint when started again;
  2. on SIGTERM (the scheduler's notice; it reaches every rank, not at the same point of a
     step, nor always in the same step): all ranks agree and stop after the same optimizer
     step, save a checkpoint of that step, and return exit 0 within {GRACE_S:.0f} s of the
     signal; a second SIGTERM, even in the middle of the save, changes nothing (no
     checkpoint is left half written as the newest);
  3. started again on DIR (the requeued job, same W), continue bit for bit: the same samples
     at every step, the same dropout masks, the same parameters at the end as a run that was
     never interrupted (save what makes it so: model, optimizer, step, data position, RNG).
     Under torchrun, destroy the process group at the end.

How it is graded (real runs, observed from outside):
{graded_table(GRADED)}"""


def given_file(name: str) -> str:
    return (FILES / name).read_text()


def launch_plans() -> dict[str, LaunchPlan]:
    base = LaunchPlan("straight", 2, STEPS, CKPT_EVERY, data="train")
    plans = (
        base,
        replace(base, name="term"),
        replace(base, name="term-late"),
        replace(base, name="requeue", continues="term"),
        replace(base, name="term-again"),
        replace(base, name="requeue-again", continues="term-again"),
    )
    return {plan.name: plan for plan in plans}


PREEMPTED = ("term", "term-late", "term-again")  # the launches SIGTERM reaches
PHASE_LAUNCHES: dict[str, tuple[str, ...]] = {
    "stop": ("term", "term-late"),
    "requeue": ("straight", "term", "requeue"),
    "again": ("term-again", "requeue-again"),
}


def first_rank(seed: int) -> int:
    """The rank the first SIGTERM reaches, drawn from the grading's seed."""
    return random.Random(seed).choice((0, 1))


def faults(plan: LaunchPlan, seed: int) -> Faults:
    if plan.name not in PREEMPTED:
        return Faults()
    if plan.name == "term-late":  # the other rank first, this one LATE_BY steps later
        other = 1 - first_rank(seed)
        return Faults(term_after_step=TERM_AFTER, term_first=other, term_late_by=LATE_BY)
    again = plan.name == "term-again"
    return Faults(
        term_after_step=TERM_AFTER, term_first=first_rank(seed), term_again_during_save=again
    )


def to_launch(
    plan: LaunchPlan, script: Path, out_dir: Path, seed: int, timeout_s: float = TIMEOUT_S
) -> ScriptLaunch:
    from trainer_lab.grading.grader import launch_for

    return launch_for(
        plan,
        script,
        out_dir,
        timeout_s,
        seed=seed,
        ckpt_of=plan.continues or plan.name,
        data=DataPlan(seed=group_seed(seed, plan.data)),
        faults=faults(plan, seed),
    )


def phase_checks(phase: str, runs: dict[str, ScriptRun]) -> list[Check]:
    missing = [n for n in PHASE_LAUNCHES[phase] if n not in runs]
    if missing:
        return [
            check(n, False, f"not run: {missing}", {"not_run": True}) for n in CHECK_NAMES[phase]
        ]
    if phase == "stop":
        return stop_checks(runs["term"], TERM_AFTER, GRACE_S, runs["term-late"])
    if phase == "requeue":
        return [
            *requeue_checks(runs["straight"], runs["term"], runs["requeue"], STEPS),
            *straight_checks(runs["straight"], CKPT_EVERY, STEPS),
        ]
    return again_checks(runs["term-again"], runs["requeue-again"], CKPT_EVERY, GRACE_S)


SPEC = PromptSpec(
    LAB, PHASES, CHECK_NAMES, SCRIPT_NAME, (FILES / "drill_data.py",), PHASE_LAUNCHES, phase_checks
)


def _launches(seed: int, out_dir: Path, timeout_s: float) -> Launches:
    return Launches(
        launch_plans(),
        lambda plan, script: to_launch(plan, script, out_dir, seed, timeout_s),
        lambda runs: {"sigterm": {name: facts(runs[name]) for name in PREEMPTED if name in runs}},
    )


grade_preemption = prompt_grader(SPEC, _launches, TIMEOUT_S)
"""Grade the script as this round's train.py; write out_dir/result.json."""

"""The distributed-evaluation round: exact metrics over a sharded eval set, eval during training,
and a best checkpoint that survives a restart (torch-free; its given files are in eval_files/).

    grading = grade_evaluation(Path("train.py"), run_dir, phases=("exact",))

Graded by the coding round's harness: the launches run through grader.run_launches (the
usercode runner, torchrun or the warm launcher, the same limits), the checks are
checks_eval.py's, the result a lab result like the DDP round's.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from trainer_lab.grading.contract import LaunchPlan
from trainer_lab.grading.data_plans import group_seed
from trainer_lab.grading.graded_table import graded_table
from trainer_lab.grading.prompts.checks_eval import (
    EVAL_SIZE,
    best_checks,
    during_checks,
    exact_checks,
)
from trainer_lab.grading.prompts.prompt_grading import Launches, PromptSpec, prompt_grader
from trainer_lab.result import Check
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun
from trainer_lab.usercode.verdict import check

FILES = Path(__file__).parent / "eval_files"
LAB = "mock-coding-eval"
SCRIPT_NAME = "train.py"
STEPS = 18  # not a multiple of EVAL_EVERY: the eval after step N is seen
CKPT_EVERY = 4
EVAL_EVERY = 4
# The kill comes after step 13: the step-12 checkpoint and the evals at 4, 8 and 12 are done.
KILL_AFTER = 3 * CKPT_EVERY + 1
TIMEOUT_S = 90.0  # per launch
# the eval steps of the relaunch, which resumes at the newest checkpoint (step KILL_AFTER - 1)
NEWEST_CKPT = (KILL_AFTER // CKPT_EVERY) * CKPT_EVERY
EVAL_STEPS = sorted({*range(EVAL_EVERY, STEPS + 1, EVAL_EVERY), STEPS})
RELAUNCH_EVALS = [s for s in EVAL_STEPS if s > NEWEST_CKPT]

PHASES = ("exact", "during", "best")
CHECK_NAMES: dict[str, tuple[str, ...]] = {
    "exact": ("exact.count_is_eval_size", "exact.same_at_every_world_size"),
    "during": ("during.trains", "during.evals_every_e"),
    "best": ("best.survives_restart", "best.checkpoint_is_best"),
}

# phase -> its row of the "How it is graded" table (trainer_lab.grading.graded_table)
GRADED: dict[str, str] = {
    "exact": f"""\
--eval-only at W=1, 2 and 3 on an empty DIR: one eval line each, count {EVAL_SIZE}, every
eval sample read, the same loss and accuracy (within 1e-5) at every world size""",
    "during": f"""\
W=2, N={STEPS}, C={CKPT_EVERY}, E={EVAL_EVERY}: exits 0 after N optimizer steps on each
rank (replicas identical), eval lines after steps {", ".join(map(str, EVAL_STEPS))},
each over {EVAL_SIZE} samples, every one read in that eval""",
    "best": f"""\
W=2: a rank is SIGKILLed after step {KILL_AFTER}, the run relaunched (its data may
drift: later evals can be worse); the relaunch resumes at step {NEWEST_CKPT} and
its eval steps are {", ".join(map(str, RELAUNCH_EVALS))} only. Its best line names the
lowest eval loss printed before and after the restart, and --eval-only on DIR at
W=2 and W=3 evaluates that model (on eval values drawn anew: numbers must follow them)""",
}

CONTRACT = f"""\
Your eval numbers differ across world sizes: build training with exact distributed evaluation,
in one file, train.py.

Given: drill_data.py: `TrainSet()` ({48} samples) and `EvalSet()` ({EVAL_SIZE} samples, not
divisible by 2 or 3); item i is (i, x, label): 8 features, an int64 class label (3 classes).
Use drill_data.BATCH_SIZE training samples per rank per step (import it). Seed the model's
initialization (runs are compared). Use a torch.optim optimizer.

Your script must:
  1. run as `python train.py --steps N --ckpt-dir DIR --ckpt-every C --eval-every E` and under
     `torchrun --nproc-per-node W` (gloo on CPU), train until global step N, save a checkpoint
     into DIR after every C-th step and resume by itself from the newest one (by step number)
     when started again; the grader always passes all four options (with --eval-only too);
  2. after every E-th step (and after step N) evaluate the whole eval set, sharded across the
     ranks, and print from rank 0 only (the other ranks print no eval or best lines) one JSON
     line:
       {{"eval_step": 8, "loss": 0.91, "accuracy": 0.48, "count": {EVAL_SIZE}}}
     loss: mean cross-entropy over the eval samples, accuracy: the fraction predicted right,
     count: how many samples were counted; the numbers must not depend on W and are computed
     from the eval samples read in that eval (read each through the dataset: the grader
     observes the reads); per-step training lines are optional;
  3. keep the best checkpoint (lowest eval loss; on a tie the earlier eval stays best) in DIR;
     at the end print from rank 0
       {{"best_step": 12, "best_loss": 0.87}}
     the best over the whole run, across restarts (a stored best is not re-scored);
  4. with `--eval-only`, evaluate the best checkpoint in DIR (the initial model when there is
     none) at any W, every rank on that model, print one eval line (eval_step: the best's step,
     0 for the initial model) and exit 0. Under torchrun, destroy the process group at the end.

How it is graded (real runs, observed from outside):
{graded_table(GRADED)}"""


def given_file(name: str) -> str:
    return (FILES / name).read_text()


def launch_plans(seed: int) -> dict[str, LaunchPlan]:
    """Every launch of the round; the killed rank is drawn from the grading's seed."""
    base = LaunchPlan("train", 2, STEPS, CKPT_EVERY, data="train")
    eval_only = replace(base, extra_args=("--eval-only",), data="eval")
    kill_rank = random.Random(seed).choice((0, 1))
    plans = (
        base,
        replace(eval_only, name="exact-1", world_size=0),
        replace(eval_only, name="exact-2", world_size=2),
        replace(eval_only, name="exact-3", world_size=3),
        replace(base, name="kill", kill=(kill_rank, KILL_AFTER)),
        replace(base, name="resume", continues="kill", data="shifted"),
        # the model in DIR, on the eval values the killed run evaluated (its data group), and on
        # the relaunch's (when the best came after the restart)
        # at W=2 and W=3: every rank must evaluate the best (not rank 0 alone)
        replace(eval_only, name="best-eval", world_size=2, continues="resume", data="train"),
        replace(
            eval_only, name="best-eval-shifted", world_size=3, continues="resume", data="shifted"
        ),
    )
    return {plan.name: plan for plan in plans}


PHASE_LAUNCHES: dict[str, tuple[str, ...]] = {
    "exact": ("exact-1", "exact-2", "exact-3"),
    "during": ("train",),
    "best": ("kill", "resume", "best-eval", "best-eval-shifted"),
}


def chain_head(plans: dict[str, LaunchPlan], name: str) -> str:
    while plans[name].continues:
        name = plans[name].continues  # type: ignore[assignment]
    return name


def to_launch(
    plan: LaunchPlan,
    plans: dict[str, LaunchPlan],
    script: Path,
    out_dir: Path,
    seed: int,
    timeout_s: float = TIMEOUT_S,
) -> ScriptLaunch:
    from trainer_lab.grading.grader import launch_for

    return launch_for(
        plan,
        script,
        out_dir,
        timeout_s,
        seed=seed,
        ckpt_of=chain_head(plans, plan.name),
        data=DataPlan(seed=group_seed(seed, plan.data)),
        extra_args=("--eval-every", str(EVAL_EVERY)),
    )


def phase_checks(phase: str, runs: dict[str, ScriptRun]) -> list[Check]:
    missing = [n for n in PHASE_LAUNCHES[phase] if n not in runs]
    if missing:
        return [
            check(n, False, f"not run: {missing}", {"not_run": True}) for n in CHECK_NAMES[phase]
        ]
    if phase == "exact":
        return exact_checks([runs[n] for n in PHASE_LAUNCHES[phase]])
    if phase == "during":
        return during_checks(runs["train"], STEPS, EVAL_EVERY)
    return best_checks(
        runs["kill"], runs["resume"], runs["best-eval"], runs["best-eval-shifted"], RELAUNCH_EVALS
    )


SPEC = PromptSpec(
    LAB, PHASES, CHECK_NAMES, SCRIPT_NAME, (FILES / "drill_data.py",), PHASE_LAUNCHES, phase_checks
)


def _launches(seed: int, out_dir: Path, timeout_s: float) -> Launches:
    plans = launch_plans(seed)
    return Launches(
        plans,
        lambda plan, script: to_launch(plan, plans, script, out_dir, seed, timeout_s),
        lambda runs: {"kill": plans["kill"].kill},
    )


grade_evaluation = prompt_grader(SPEC, _launches, TIMEOUT_S)
"""Grade the script as this round's train.py; write out_dir/result.json."""

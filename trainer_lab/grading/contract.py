"""The coding round's contract, the files it ships, its checks and the launches that grade a
script (torch-free, light: the app imports it to show the contract and open a round).

The given files live in trainer_lab/grading/files/ (package data, torch code that only the graded
subprocesses run, never imported here): the dataset module the script may import, the starter the
editor opens with, the model answer and its broken variants (variants.toml).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trainer_lab.usercode.protocol import DATASET_MODULE

FILES = Path(__file__).parent / "files"
DATASET_MODULE_FILE = f"{DATASET_MODULE}.py"  # the harness records the ids it hands out
SCRIPT_NAME = "train.py"
LAB = "mock-coding"  # the lab name of a grading's result
DEFAULT_TIMEOUT_S = 90.0  # per launch
# The one-process run's deadline: when it does not finish, nothing else is run (fail fast).
SKELETON_TIMEOUT_S = 40.0
MAX_TEAR_WRITES = 4  # a save of more files is torn at its first two and last two writes

# Mirrors drill_data.py (a test keeps them equal); the grader must not import torch.
DATASET_SIZE = 48
BATCH_SIZE = 4

PHASES = ("skeleton", "distributed", "restart", "torn", "monitoring")
CHECK_NAMES: dict[str, tuple[str, ...]] = {
    "skeleton": ("skeleton.exits", "skeleton.json_lines", "skeleton.loss_falls"),
    "distributed": (
        "distributed.exactly_once",
        "distributed.new_order",
        "distributed.params_in_sync",
        "distributed.rank0_prints",
    ),
    "restart": (
        "restart.resumes_at_checkpoint",
        "restart.no_replay_or_skip",
        "restart.matches_uninterrupted",
        "restart.single_writer",
    ),
    "torn": ("torn.previous_checkpoint_used", "torn.finishes"),
    "monitoring": ("monitoring.named_phases", "monitoring.phases_add_up"),
}

CONTRACT = f"""\
Build a distributed training pipeline in one file, train.py.

Given: drill_data.py (in the workspace) provides the dataset: `ToyDataset()` is map-style with
{DATASET_SIZE} samples; item i is (i, x, y): the sample id, 8 features, a target of shape (1,).
Use BATCH_SIZE = {BATCH_SIZE} samples per rank per step. Keep num_workers=0 (two CPU cores).
Use a torch.optim optimizer (the grader watches its steps: a run with none fails every phase).

Your script must:
  1. run as `python train.py --steps N --ckpt-dir DIR --ckpt-every C` and as
     `torchrun --nproc-per-node W train.py ...` (gloo on CPU), training until global step N;
  2. save a checkpoint into DIR after every C-th step and, when started again with the same
     arguments, resume by itself from the newest complete checkpoint in DIR;
  3. print from rank 0 only, to stdout, one JSON line per step:
       {{"step": 5, "loss": 0.41, "phases": {{"data": 0.002, "forward": 0.001, ...}},
        "step_time": 0.006}}
     step counts optimizer steps from 1 (after a resume it continues), phases has at least
     three named phases in seconds, step_time is the whole step in seconds;
  4. stop after global step N exactly (N counts from step 0, not from a resume) and exit 0.
     Under torchrun, call dist.destroy_process_group() at the end (a barrier() before it is
     allowed, not required). gloo can abort a process while it closes its connections
     (SIGABRT, "terminate called without an active exception"): a race in torch, not in your
     code. An abort inside destroy_process_group or after your script returned is reported as
     a note, not a failure; an abort anywhere else fails the run.
Everything else is your design.

How it is graded (each check is a real run, observed from outside: parameters and gradients
after every optimizer step on every rank, the ids every rank fetched, checkpoint writes):
  skeleton     one process: exits 0 after exactly N optimizer steps, the JSON lines parse
               (steps 1..N), the loss falls, and the updates depend on the data: a second run
               on other data (the grader swaps the dataset) must compute other gradients
  distributed  W=2 and W=3: every sample exactly once per epoch across ranks, a new order
               every epoch, identical parameters on every rank after every step, and a step
               at W=3 equals one process on the global batch (gradients averaged, not summed;
               compared on data where every sample is the same), only rank 0 prints step lines
  restart      W=2, rank 1 SIGKILLed after a step, relaunched: resumes at the last checkpoint,
               no replayed or skipped samples, parameters equal an uninterrupted run's after
               every later step (bit for bit), each checkpoint file written by one rank
  torn         killed in the middle of writing the k-th file of the save after step 8 (for
               each file the save writes, up to 4), relaunched: the previous complete
               checkpoint is used and the run finishes at exactly N. Writes are watched at the
               file level (open/os.open/torch.save into DIR, fsync, rename)
  monitoring   step lines carry >= 3 named phases that add up to the step time within 10 %
"""


def given_file(name: str) -> str:
    return (FILES / name).read_text()


def dataset_source() -> str:
    return given_file(DATASET_MODULE_FILE)


def model_answer_source() -> str:
    return given_file("train.py")


def starter_source() -> str:
    return given_file("starter.py")


@dataclass(frozen=True)
class LaunchPlan:
    """One real run of the script: world size (0 = plain python), arguments, faults, and the
    launch whose checkpoint dir it continues (a relaunch)."""

    name: str
    world_size: int
    steps: int
    ckpt_every: int
    kill: tuple[int, int] | None = None  # (rank, after optimizer step)
    tear_after_step: int | None = None
    continues: str | None = None
    tear_write: int = 1  # the k-th file written after tear_after_step is torn
    tear_rank: int | None = None  # only on this rank (None: on every rank)
    data_variant: str | None = None  # the given dataset draws other data (drill_data._variant)
    # Runs are forked from the warm launcher, except one under real torchrun: the runs that
    # continue from it (resume, tears) are compared with it step by step, so a script that could
    # tell the two apart fails there.
    under_torchrun: bool = False
    extra_args: tuple[str, ...] = ()  # after the round's arguments (a stretch phase's flags)
    probes: bool = False  # the harness's extra probes (usercode/probes.py)
    inf_at_step: int | None = None  # with probes: the backward of this step leaves an inf grad
    reference: str | None = None  # run this stretch phase's model answer, not the user's script
    exclusive: bool = False  # nothing else runs beside it (its timing is compared)


CKPT_EVERY = 4
RESTART_KILLED_AFTER = 2 * CKPT_EVERY + 1  # rank 1 dies after step 9: the step-8 save is done
TEAR_AFTER = 2 * CKPT_EVERY  # the save at step 8 is torn: step 4 is the last complete one

LAUNCHES: dict[str, LaunchPlan] = {
    plan.name: plan
    for plan in (
        LaunchPlan("single", 0, steps=24, ckpt_every=8),
        LaunchPlan("single-other-data", 0, steps=8, ckpt_every=8, data_variant="constant"),
        LaunchPlan("w2", 2, steps=16, ckpt_every=CKPT_EVERY, under_torchrun=True),
        LaunchPlan("w3", 3, steps=10, ckpt_every=CKPT_EVERY, data_variant="constant"),
        LaunchPlan("kill", 2, 16, CKPT_EVERY, kill=(1, RESTART_KILLED_AFTER)),
        LaunchPlan("resume", 2, 16, CKPT_EVERY, continues="kill"),
        LaunchPlan("tear", 2, 16, CKPT_EVERY, tear_after_step=TEAR_AFTER),
        LaunchPlan("tear-resume", 2, 16, CKPT_EVERY, continues="tear"),
    )
}

OTHER_DATA = "single-other-data"
PHASE_LAUNCHES: dict[str, tuple[str, ...]] = {
    "skeleton": ("single", OTHER_DATA),
    "distributed": ("w2", "w3", OTHER_DATA),
    "restart": ("w2", "kill", "resume"),
    "torn": ("w2", "tear", "tear-resume"),
    "monitoring": ("w2",),
}


def tear_plans(k: int, rank: int) -> tuple[LaunchPlan, LaunchPlan]:
    """The tear of the k-th file written after TEAR_AFTER on `rank`, and its relaunch."""
    name = f"tear-{k}"
    tear = LaunchPlan(
        name, 2, 16, CKPT_EVERY, tear_after_step=TEAR_AFTER, tear_write=k, tear_rank=rank
    )
    return tear, LaunchPlan(f"{name}-resume", 2, 16, CKPT_EVERY, continues=name)


def tear_writes(count: int) -> list[int]:
    """Which of a save's `count` file writes get torn (1 is always torn, by the "tear" run)."""
    if count <= MAX_TEAR_WRITES:
        return list(range(1, count + 1))
    half = MAX_TEAR_WRITES // 2
    return sorted({*range(1, half + 1), *range(count - half + 1, count + 1)})

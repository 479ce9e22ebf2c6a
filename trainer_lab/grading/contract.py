"""The coding round's contract, the files it ships, its checks and the launches that grade a
script (torch-free, light: the app imports it to show the contract and open a round).

The given files live in trainer_lab/grading/files/ (package data, torch code that only the graded
subprocesses run, never imported here): the dataset module the script may import, the starter the
editor opens with, the model answer and its broken variants (variants.toml).
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from trainer_lab.grading.graded_table import graded_table
from trainer_lab.usercode.known_work import COVER, READ_WAIT_S, STEP_WAIT_S
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

CKPT_EVERY = 4
W2_REFERENCE_BATCH = 3 * BATCH_SIZE // 2  # per rank at W=2: the global batch of W=3
# The W=2 runs of the restart and torn phases (and the uninterrupted run they are compared
# with): checkpoints after steps 4, 8, ..., 24; a resume at step 16 is compared for 8 steps (a
# lost LR schedule of period 5 shows).
RESTART_STEPS = 6 * CKPT_EVERY

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

# phase -> its row of the "How it is graded" table (trainer_lab.grading.graded_table)
GRADED: dict[str, str] = {
    "skeleton": """\
one process: exits 0 after exactly N optimizer steps, the JSON lines parse
(steps 1..N), the loss falls, each printed loss is the step's trained loss
(compared with the value every backward pass started from), and the updates
depend on the data: a second run on other values must end at parameters at
least 5 % of the distance they moved away from the first run's""",
    "distributed": f"""\
W=2 and W=3: every sample exactly once per epoch across ranks, a new order
every epoch, identical parameters on every rank after every step, the ranks
exchange gradients (in most steps, collectives of at least half the gradient's
elements between a rank's forward and its optimizer step, seen at the process-
group level: DDP, FSDP2, a hand all_reduce alike) and each rank computes the
gradient of its own shard (its model's forwards, outermost module with autograd
on, run on at most BATCH_SIZE samples a step in most steps), and a step
at W=3 equals one process on the global batch: your script run as one process
(BATCH_SIZE = 3 x {BATCH_SIZE}) is served in its step s the samples the 3 ranks
read for their step s; the gradients must agree step by step (averaged, not
summed nor one rank's: in direction within 70 % and in norm x0.6-1.6, medians
over the steps); and a step does not depend on the world size: your script at
W=2 (BATCH_SIZE = {W2_REFERENCE_BATCH}) is served the same global batches, and its
gradient norms must be x0.8-1.25 of W=3's (median) and its parameters after the
last step within 10 % of the distance they moved (in these three runs every
dropout is the identity, as ranks cannot draw one process's masks), only rank 0
prints step lines, and every rank has destroyed its process group when the
script returns""",
    "restart": f"""\
W=2, {RESTART_STEPS} steps: one rank SIGKILLed after a step, relaunched (which rank
and step are drawn per grading from its seed; the report names the seed, and
`drill mock grade --seed N` draws the same plan): resumes at the last checkpoint,
no replayed or skipped samples, parameters equal an uninterrupted run's after
every later step (bit for bit), each checkpoint file written by one rank. Until
its first optimizer step, the relaunch serves other values for the samples read
before the checkpoint: the past lives in the checkpoint, it cannot be replayed""",
    "torn": """\
killed in the middle of writing the k-th file of the save after step 8 (for
each file the save writes, up to 4; the first on every rank, and, when several
ranks write that save, on one rank alone while the others' saves complete: the
ranks must agree on the checkpoint they resume from, the previous one or, when
the complete saves hold the whole state, the torn step's), relaunched: the
previous complete checkpoint is used and the run finishes at exactly N. A save
is what a rank writes into DIR after an optimizer step, up to its commit (the
rename or the empty marker file that makes it complete), watched at the file level
(open/os.open/torch.save into DIR, fsync, rename). The tears hit the files that
get bytes: cut to half the bytes written as the file is closed, then SIGKILL.
A rename and a file created empty (`touch`) cannot be half done, so they are
never torn: commit after the files the save covers are complete (a marker with
contents is a file like the others, and can be torn)""",
    "monitoring": f"""\
step lines carry >= 3 named phases that add up to the step time within 10 %
on every step of the W=2 run, which must finish. Under the grader each
sample read waits {READ_WAIT_S * 1e3:g} ms first (slow storage, on purpose),
and every optimizer.step() {STEP_WAIT_S * 1e3:g} ms more: reading a batch and
the optimizer step are large shares of a step; the phases must cover them (the
step times hold at least {COVER:.0%} of those waits, and one phase each of the
reads' and of the optimizer steps' waits, timed where the work happens)""",
}

CONTRACT = f"""\
Build a distributed training pipeline in one file, train.py.

Given: drill_data.py (in the workspace) provides the dataset: `ToyDataset()` is map-style with
{DATASET_SIZE} samples; item i is (i, x, y): the sample id, 8 features, a target of shape (1,).
Use drill_data.BATCH_SIZE samples per rank per step: import it, never write the number (it is
{BATCH_SIZE}; a one-process run may get another). Keep num_workers=0 (two CPU cores).
Samples are read through `dataset[i]` or `dataset.__getitems__(ids)` (a DataLoader calls it);
every such read is observed. The dataset holds no tensors: there is no other way to the values.
Every run draws its own values for the ids (train on what you read, when you read it); seed the
model's initialization (the same initial weights in every run: runs are compared).
Use a torch.optim optimizer (the grader watches its steps: a run with none fails every phase;
a step at lr 0 on all-zero gradients, the one torch's DCP get_state_dict runs on a fresh
optimizer to make its state, is not a training step and is not counted).

Your script must:
  1. run as `python train.py --steps N --ckpt-dir DIR --ckpt-every C` and as
     `torchrun --nproc-per-node W train.py ...` (gloo on CPU), training until global step N;
  2. save a checkpoint into DIR after every C-th step and, when started again with the same
     arguments, resume by itself from the newest complete checkpoint in DIR;
  3. print from rank 0 only, to stdout, one JSON line per step:
       {{"step": 5, "loss": 0.41, "phases": {{"data": 0.002, "forward": 0.001, ...}},
        "step_time": 0.006}}
     step counts optimizer steps from 1 (after a resume it continues), loss is the loss that
     step trained on (what its backward started from, or its mean over micro-batches or
     samples; not smoothed, not rescaled; a loss scaler's factor aside), phases has at least
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
{graded_table(GRADED)}"""


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
    # Launches of one `data` group draw the same samples, from a seed the grader draws per
    # grading and group (a relaunch reads its run's samples): usercode/dataplan.py
    data: str = "round"
    # a reference: served, read by read, the global batches launch `replays` consumed step by
    # step (it runs after that launch); batch_size: drill_data.BATCH_SIZE in this launch
    replays: str | None = None
    batch_size: int | None = None
    # Runs are forked from the warm launcher, except one under real torchrun: the runs that
    # continue from it (resume, tears) are compared with it step by step, so a script that could
    # tell the two apart fails there.
    under_torchrun: bool = False
    extra_args: tuple[str, ...] = ()  # after the round's arguments (a stretch phase's flags)
    probes: bool = False  # the harness's extra probes (usercode/probes.py)
    inf_at_step: int | None = None  # with probes: the backward of this step leaves an inf grad
    reference: str | None = None  # run this stretch phase's model answer, not the user's script
    exclusive: bool = False  # nothing else runs beside it (its timing is compared)
    read_wait_s: float = 0.0  # each sample read waits this long first (usercode/known_work.py)
    step_wait_s: float = 0.0  # each optimizer step waits this long (usercode/known_work.py)
    # every dropout is the identity (usercode/dropout.py): runs compared step by step with one
    # that cannot draw the same masks (W=3 ranks against one process)
    dropout_off: bool = False


# A grading's kill comes after one of these steps (drawn per grading, fault_plan()): the newest
# complete checkpoint is then always step 16, two digits beside 4 and 8 (a "newest" picked by
# string order takes step 8), and 4 steps into an epoch at W=2 (a resume that starts the
# epoch over replays samples; step 12 would be an epoch's end).
KILL_STEPS = (4 * CKPT_EVERY + 1, 4 * CKPT_EVERY + 2, 4 * CKPT_EVERY + 3)
RESTART_KILLED_AFTER = KILL_STEPS[0]  # the default plan's (LAUNCHES): the step-16 save is done
TEAR_AFTER = 2 * CKPT_EVERY  # the save at step 8 is torn: step 4 is the last complete one


@dataclass(frozen=True)
class FaultPlan:
    """A grading's faults, drawn from its seed: the rank SIGKILLed after step kill_after (the
    "kill" launch), and the rank whose save after tear_after is torn alone (a "tear-1" launch,
    when more than one rank writes that save; the "tear" launch tears every rank's)."""

    seed: int
    kill_rank: int
    kill_after: int
    tear_rank: int
    tear_after: int = TEAR_AFTER

    @property
    def resume_step(self) -> int:
        """The newest complete checkpoint when the kill comes (the save after step kill_after
        itself has not started: the kill comes right after the optimizer step)."""
        return (self.kill_after - 1) // CKPT_EVERY * CKPT_EVERY

    def to_dict(self) -> dict[str, int]:
        return {
            "seed": self.seed,
            "kill_rank": self.kill_rank,
            "kill_after": self.kill_after,
            "tear_rank": self.tear_rank,
            "tear_after": self.tear_after,
        }


def fault_plan(seed: int | None = None) -> FaultPlan:
    """The fault plan of `seed` (None: a fresh seed): the same seed, the same plan."""
    if seed is None:
        seed = secrets.randbelow(2**31)
    draw = random.Random(seed)
    return FaultPlan(
        seed,
        kill_rank=draw.choice((0, 1)),
        kill_after=draw.choice(KILL_STEPS),
        tear_rank=draw.choice((0, 1)),
    )


OTHER_DATA = "single-other-data"
W3_REFERENCE = "w3-reference"
# the script at W=2 served the global batches of w3 (W2_REFERENCE_BATCH per rank): a step must not
# depend on the world size at a fixed global batch, whatever the script does as one process (a
# sum of gradients scaled away only when alone is caught here)
W2_REFERENCE = "w3-at-w2"
# drill_data.BATCH_SIZE in the one-process runs: the global batch of W=3 (the reference of w3
# needs it; the skeleton's runs use it too, so that the reference looks like them)
ONE_PROCESS_BATCH = 3 * BATCH_SIZE

LAUNCHES: dict[str, LaunchPlan] = {
    plan.name: replace(plan, read_wait_s=READ_WAIT_S, step_wait_s=STEP_WAIT_S)
    for plan in (
        LaunchPlan("single", 0, 24, 8, data="single", batch_size=ONE_PROCESS_BATCH),
        LaunchPlan(OTHER_DATA, 0, 24, 8, data="other", batch_size=ONE_PROCESS_BATCH),
        LaunchPlan("w2", 2, RESTART_STEPS, CKPT_EVERY, under_torchrun=True),
        LaunchPlan("w3", 3, steps=10, ckpt_every=CKPT_EVERY, data="w3", dropout_off=True),
        # one process served the global batches of w3, step by step; like "single" to the script
        LaunchPlan(
            W3_REFERENCE,
            0,
            24,
            8,
            data="w3",
            replays="w3",
            batch_size=ONE_PROCESS_BATCH,
            dropout_off=True,
        ),
        LaunchPlan(
            W2_REFERENCE,
            2,
            steps=10,
            ckpt_every=CKPT_EVERY,
            data="w3",
            replays="w3",
            batch_size=W2_REFERENCE_BATCH,
            dropout_off=True,
        ),
        LaunchPlan("kill", 2, RESTART_STEPS, CKPT_EVERY, kill=(1, RESTART_KILLED_AFTER)),
        LaunchPlan("resume", 2, RESTART_STEPS, CKPT_EVERY, continues="kill"),
        LaunchPlan("tear", 2, RESTART_STEPS, CKPT_EVERY, tear_after_step=TEAR_AFTER),
        LaunchPlan("tear-resume", 2, RESTART_STEPS, CKPT_EVERY, continues="tear"),
    )
}

PHASE_LAUNCHES: dict[str, tuple[str, ...]] = {
    "skeleton": ("single", OTHER_DATA),
    "distributed": ("w2", "w3", W3_REFERENCE, W2_REFERENCE),
    "restart": ("w2", "kill", "resume"),
    "torn": ("w2", "tear", "tear-resume"),
    "monitoring": ("w2",),
}


def fault_launches(faults: FaultPlan) -> dict[str, LaunchPlan]:
    """LAUNCHES with the kill and the tear of `faults`."""
    return {
        **LAUNCHES,
        "kill": replace(LAUNCHES["kill"], kill=(faults.kill_rank, faults.kill_after)),
        "tear": replace(LAUNCHES["tear"], tear_after_step=faults.tear_after),
    }


def tear_plans(k: int, rank: int, after_step: int = TEAR_AFTER) -> tuple[LaunchPlan, LaunchPlan]:
    """The tear of the k-th file written after `after_step` on `rank` alone, and its relaunch
    (launches "tear-K" and "tear-K-resume")."""
    name = f"tear-{k}"
    tear = replace(
        LAUNCHES["tear"], name=name, tear_after_step=after_step, tear_write=k, tear_rank=rank
    )
    return tear, replace(LAUNCHES["tear-resume"], name=f"{name}-resume", continues=name)


def tear_writes(count: int) -> list[int]:
    """Which of a save's `count` file writes get torn (1 is always torn, by the "tear" run)."""
    if count <= MAX_TEAR_WRITES:
        return list(range(1, count + 1))
    half = MAX_TEAR_WRITES // 2
    return sorted({*range(1, half + 1), *range(count - half + 1, count + 1)})

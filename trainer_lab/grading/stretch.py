"""The coding round's stretch phases: their contracts, checks, model answers and launches
(torch-free, light: the app imports it to show a stretch phase's contract).

A stretch phase is graded like the round's phases, by what the runs did, and is valid for
`grade(..., phases=(...))`, but is not in PHASES: the round's own grading is unchanged. The script
is the user's train.py of the round, extended; every stretch run keeps the round's contract
(arguments, step lines, resume). Some runs ask the harness for its probes (usercode/probes.py:
gradients after every backward pass, forward output dtypes, an injected inf gradient).
"""

from __future__ import annotations

from trainer_lab.grading.contract import BATCH_SIZE, CKPT_EVERY, LaunchPlan, given_file

STRETCH_PHASES = ("accum", "amp", "fsdp2", "throughput")
STRETCH_CHECK_NAMES: dict[str, tuple[str, ...]] = {
    "accum": ("accum.micro_batches", "accum.one_allreduce_per_step", "accum.matches_large_batch"),
    "amp": ("amp.autocast", "amp.loss_scaled", "amp.skips_nonfinite", "amp.scaler_resumed"),
    "fsdp2": ("fsdp2.sharded", "fsdp2.learns", "fsdp2.resumes"),
    "throughput": ("throughput.reported_matches_observed", "throughput.target"),
}

ACCUM_K = 4  # micro-batches per optimizer step in the accum runs
AMP_INF_AT = 6  # the backward of step 6 leaves an inf gradient on every rank
STRETCH_KILLED_AFTER = 2 * CKPT_EVERY + 1  # rank 1 SIGKILLed after its 9th optimizer step
GRAD_RATIO_RANGE = (0.6, 1.6)  # a step against the same step on the large batch / one process
# of the model answer's samples/s, measured in the same grading. The model answer against itself
# measured 0.68-1.17x on a loaded two-core machine with two runs a side (benchmarks/
# RESULTS-stretch.md): 0.8 failed right answers there.
THROUGHPUT_TARGET = 0.7
STEP_QUANTILE = 0.1  # a fast step's time: this quantile of the times between optimizer steps
REPORTED_RANGE = (0.75, 1.33)  # the logged samples/s against what the harness observed
THROUGHPUT_STEPS = 120
# the script's runs and the model answer's, one at a time, in the order ABBAAB: each side's
# fastest run counts
THROUGHPUT_ORDER = (
    ("tput-reference", "throughput"),
    ("tput", None),
    ("tput-2", None),
    ("tput-reference-2", "throughput"),
    ("tput-reference-3", "throughput"),
    ("tput-3", None),
)

# short names for the contract texts below
_KILL, _INF, _EVERY = STRETCH_KILLED_AFTER, AMP_INF_AT, CKPT_EVERY
_LOW, _HIGH = REPORTED_RANGE

_COMMON = f"""\
The script is your train.py of the round, extended: it keeps the round's contract (the same
arguments, resume from --ckpt-dir, one JSON step line per step from rank 0, exit 0 at step N,
destroy_process_group at the end). Runs are on CPU (gloo) under torchrun with W=2 unless said
otherwise; BATCH_SIZE samples per rank per forward pass (drill_data.BATCH_SIZE: {BATCH_SIZE} unless
a run sets another; import it). Seed the model's
initialization (the same weights in every run): checks compare runs with each other.
"""

STRETCH_CONTRACTS: dict[str, str] = {
    "accum": f"""\
Stretch: gradient accumulation.

{_COMMON}
Your script must also accept `--accum-steps K` (default 1): each optimizer step is made of K
micro-batches of BATCH_SIZE samples per rank (K forward and backward passes), so a step sees
W * K * BATCH_SIZE samples. Under DDP, the backward of micro-batches 1..K-1 runs inside
`ddp.no_sync()` (the gradients accumulate locally, nothing is sent) and the K-th all-reduces the
sum once. Divide each micro-batch's loss by K: a step must equal one step on the K-times batch.
`step` in the step lines counts optimizer steps; a resume at step s starts at micro-batch s * K.

How it is graded (K = {ACCUM_K}; every rank's gradients are recorded as every backward pass
begins and ends, and at every optimizer step):
  accum.micro_batches           every optimizer step ran K backward passes on every rank and
                                fetched K * BATCH_SIZE samples per rank
  accum.one_allreduce_per_step  after micro-batches 1..K-1 (and between them) the ranks'
                                gradients differ, at the optimizer step they are identical: one
                                all-reduce per step. Gradients identical after micro-batch 1
                                mean it was all-reduced (no no_sync): K all-reduces per step
  accum.matches_large_batch     step 1 at K = {ACCUM_K} against the same script at K = 1 with
                                BATCH_SIZE = K * {BATCH_SIZE}, served the same samples (each
                                rank its K micro-batches as one batch): the gradients the
                                optimizer steps with have the same norm (x0.6-1.6); a loss
                                not divided by K gives about K times it
""",
    "amp": f"""\
Stretch: mixed precision with a loss scaler.

{_COMMON}
Run the forward pass and the loss under `torch.autocast("cpu", dtype=torch.bfloat16)`, keep the
parameters (the master weights) and the optimizer in float32, and use a loss scaler:
`torch.amp.GradScaler("cpu")` or your own. The loss is multiplied by the scale before backward,
the gradients divided by it before the optimizer step; a step whose gradients are not finite is
skipped (no optimizer step) and the scale backed off. A skipped step still counts as a step of
the loop (`step` goes on; --steps counts loop steps). The scaler's state goes into the
checkpoint and is restored on resume.

Honest about CPU: bfloat16 has float32's exponent range, so it does not need a loss scaler to
avoid underflow; float16 does, and float16 autocast is the GPU's. This stretch practises the
scaler's mechanics, which the grader can see on CPU: it makes one step overflow.

How it is graded (W=2, 16 steps, checkpoint every {_EVERY}; the backward pass of step {_INF}
leaves an inf in a gradient on every rank, as a float16 overflow would):
  amp.autocast          the outputs of the modules that hold parameters are bfloat16 on every
                        step, and the parameters the optimizer steps are float32
  amp.loss_scaled       the gradients after backward are the optimizer's gradients times a
                        scale > 1 (the loss was scaled, the gradients unscaled before the step)
  amp.skips_nonfinite   the step with the inf gradient makes no optimizer step, the parameters
                        stay finite, the scale is lower on the next step
  amp.scaler_resumed    rank 1 SIGKILLed after its optimizer step {_KILL}, relaunched: the
                        run resumes at the step-8 checkpoint with the scale the uninterrupted
                        run had there (lowered by the overflow), and its parameters equal the
                        uninterrupted run's after every later step. A power-of-two scale
                        changes no parameter, so the scale itself is compared
""",
    "fsdp2": f"""\
Stretch: DDP replaced by FSDP2.

{_COMMON}
Under torchrun, shard the model with FSDP2: `torch.distributed.fsdp.fully_shard` (on the
submodules you choose and on the root) over a 1-D CPU mesh (`init_device_mesh("cpu", (W,))`),
then build the optimizer on the sharded parameters. A plain `python train.py` still trains one
process. Checkpoints hold each rank's shard or the full state (torch.distributed.checkpoint with
get_state_dict/set_state_dict, or full state dicts); a relaunch resumes from the newest one.

How it is graded (W=2, 16 steps, checkpoint every {CKPT_EVERY}):
  fsdp2.sharded    the parameters the optimizer steps are DTensors on every rank, each rank holds
                   a part of the model (at most 1.5/W of it) and the parts add up to the whole
                   model (the one-process run's parameter count)
  fsdp2.learns     the loss falls (rank 0's mean over epoch 1 against the last whole epoch);
                   step 1's full gradient norm (over the shards) is that of one
                   process served the same global batch (BATCH_SIZE = W * {BATCH_SIZE}) (x0.6-1.6)
  fsdp2.resumes    rank 1 SIGKILLed after step {_KILL}, relaunched: every rank resumes from
                   its shard after step 8 and matches the uninterrupted run's shard after
                   every later step (bit for bit, or within 1e-6)
""",
    "throughput": f"""\
Stretch: a throughput target in samples/s.

{_COMMON}
Each step line also carries `"samples_per_s"`: samples trained per second of wall time, over all
ranks (global batch / seconds), over the steps since the previous line or a moving window.

How it is graded (W=2, {THROUGHPUT_STEPS} steps; your script and the model answer run three
times each, one run at a time, alternating, in the same grading on the same machine, so the
target moves with the machine's load; each side's fastest run counts):
  throughput.reported_matches_observed
      over the last three quarters of the run, your logged samples/s (their harmonic mean)
      is within x{_LOW}-{_HIGH} of what the grader observed: the samples all ranks
      fetched over the time between rank 0's optimizer steps. An inflated claim fails
  throughput.target
      your samples/s at a fast step (the {STEP_QUANTILE:.0%} quantile of the times between rank 0's
      optimizer steps: what your step costs, not what other processes cost it) reach
      {THROUGHPUT_TARGET:.0%} of the model answer's
""",
}

STRETCH_ANSWER_FILES = {
    "accum": "stretch_accum.py",
    "amp": "stretch_amp.py",
    "fsdp2": "stretch_fsdp2.py",
    "throughput": "stretch_throughput.py",
}


def stretch_contract(phase: str) -> str:
    """The contract shown for a stretch phase: what train.py must do, its flags, the checks."""
    if phase not in STRETCH_CONTRACTS:
        raise ValueError(f"not a stretch phase: {phase!r} (one of {', '.join(STRETCH_PHASES)})")
    return STRETCH_CONTRACTS[phase]


def stretch_model_answer(phase: str) -> str:
    """The model answer's source for a stretch phase (a whole train.py)."""
    if phase not in STRETCH_ANSWER_FILES:
        raise ValueError(f"not a stretch phase: {phase!r} (one of {', '.join(STRETCH_PHASES)})")
    return given_file(STRETCH_ANSWER_FILES[phase])


_K = ("--accum-steps", str(ACCUM_K))
_K1 = ("--accum-steps", "1")
NO_SAVE = 1000  # --ckpt-every for runs whose checkpoints nobody reads

STRETCH_LAUNCHES: dict[str, LaunchPlan] = {
    plan.name: plan
    for plan in (
        LaunchPlan("accum-w2", 2, 6, NO_SAVE, extra_args=_K, probes=True),
        # K=1 served, per rank, the micro-batches accum-const's step consumed: its large batch
        LaunchPlan("accum-const", 2, 2, NO_SAVE, data="accum", extra_args=_K),
        LaunchPlan(
            "accum-k1-const",
            2,
            2,
            NO_SAVE,
            data="accum",
            extra_args=_K1,
            replays="accum-const",
            batch_size=ACCUM_K * BATCH_SIZE,
        ),
        LaunchPlan("amp-w2", 2, 16, CKPT_EVERY, probes=True, inf_at_step=AMP_INF_AT),
        LaunchPlan(
            "amp-kill",
            2,
            16,
            CKPT_EVERY,
            kill=(1, STRETCH_KILLED_AFTER),
            probes=True,
            inf_at_step=AMP_INF_AT,
        ),
        LaunchPlan("amp-resume", 2, 16, CKPT_EVERY, continues="amp-kill", probes=True),
        LaunchPlan("fsdp-w2", 2, 16, CKPT_EVERY),
        LaunchPlan("fsdp-kill", 2, 16, CKPT_EVERY, kill=(1, STRETCH_KILLED_AFTER)),
        LaunchPlan("fsdp-resume", 2, 16, CKPT_EVERY, continues="fsdp-kill"),
        # one process served the global batches of fsdp-const, step by step
        LaunchPlan("fsdp-const", 2, 3, NO_SAVE, data="fsdp"),
        LaunchPlan(
            "fsdp-one-const",
            0,
            3,
            NO_SAVE,
            data="fsdp",
            replays="fsdp-const",
            batch_size=2 * BATCH_SIZE,
        ),
        # one at a time, alternating (a drift in the machine's load falls on both alike)
        *(
            LaunchPlan(name, 2, THROUGHPUT_STEPS, NO_SAVE, reference=ref, exclusive=True)
            for name, ref in THROUGHPUT_ORDER
        ),
    )
}

STRETCH_PHASE_LAUNCHES: dict[str, tuple[str, ...]] = {
    "accum": ("accum-w2", "accum-const", "accum-k1-const"),
    "amp": ("amp-w2", "amp-kill", "amp-resume"),
    "fsdp2": ("fsdp-w2", "fsdp-kill", "fsdp-resume", "fsdp-const", "fsdp-one-const"),
    "throughput": tuple(name for name, _ in THROUGHPUT_ORDER),
}

"""The follow-up questions' one data table: per failed check, and per grader phase that held, the
question template, the rubric a good answer states and the review cards it links to.

drill.mock.coding.followups picks the entries for a grading and fills the `{placeholders}` with
the facts of that run and that script (FACT_KEYS names every one; a test formats each template
with them and checks that every card id exists in the bundled decks). Templates are str.format
text: a fact the run did not show reads as a neutral phrase, never as a missing value.

- FAILED: check name -> the question a failed check asks, quoting its evidence ({evidence}); the
  rubric gets the grader's likely cause in front of it when there is one. GATE_* and HANG replace
  it when the evidence is a compile error, no optimizer step at all, or a hang.
- WHAT_IF: grader phase -> the harder question about the candidate's own design that a phase
  which held leads to (WHAT_IF_ORDER: the order they are asked in), and the check it stands on.
- OPTIMIZER_STATE: a torch.optim class -> what its state holds, and fp32 bytes per parameter.
"""

from __future__ import annotations

from typing import NamedTuple


class Template(NamedTuple):
    id: str
    text: str
    rubric: tuple[str, ...]  # 3-5 items (failed: at most 4, the likely cause goes in front)
    cards: tuple[str, ...]  # card ids in decks/*.yaml
    check: str = ""  # WHAT_IF only: the check that phase's question stands on
    lead: str = ""  # WHAT_IF only: what the grading showed; left out when the phase did not hold


# The facts drill.mock.coding.followups fills in (every placeholder of every template is one of
# these).
FACT_KEYS = frozenset(
    {
        # from the grading
        "evidence", "killed_rank", "killed_after", "expected_step", "resumed_step", "next_step",
        "resume_phrase", "ckpt_writes", "replay_rank", "replay_step", "replay_fetched",
        "replay_expected", "replay_what", "diff_step", "torn_file", "torn_bytes", "phase_list",
        "phase_count", "loss_first", "loss_last", "single_steps",
        # from the contract (the grader's launches)
        "w2_position", "w3_position", "steps_per_epoch_w2", "steps_per_epoch_w3", "batch",
        "global_batch_w2", "global_batch_w3", "global_batch_64",
        # from the script's source (ast, never run)
        "optimizer", "optimizer_state", "state_bytes", "bytes_per_param", "size_70b",
        "write_minutes", "save_phrase", "ckpt_keys", "position_source", "wrapper", "fsdp_lead",
        "lr", "sync_phase", "data_phase", "compute_phase",
    }
)  # fmt: skip

SAMPLER_CARDS = ("map-sampler-state-correctness", "map-input-partitioning")

FAILED: dict[str, Template] = {
    "skeleton.exits": Template(
        "skeleton-exit",
        'Your one-process run did not end the way the contract asks: "{evidence}". Walk me '
        "through what your script does from start to exit, and how it stops at exactly --steps "
        "and exits 0.",
        (
            "Reads the failure itself (traceback, timeout or step count) before changing code",
            "The loop is bounded by the global optimizer step (N counts from 0), not by epochs",
            "One code path: a plain `python train.py` is a world of one, no process group needed",
            "Runs a tiny N once in one process before lifting it to torchrun",
        ),
        ("map-skeleton-phase", "map-one-step", "map-self-check"),
    ),
    "skeleton.json_lines": Template(
        "skeleton-json-lines",
        'The grader could not read your stdout as step lines: "{evidence}". What else writes '
        "to stdout, and how do you keep the metrics stream machine-readable?",
        (
            "One JSON object per line, flushed, steps counted from 1 up to --steps",
            "Warnings, progress bars and debug prints go to stderr or a logger, not stdout",
            "A fixed schema: step, loss, named phases, step_time",
            "Only rank 0 prints the step lines; errors are logged from every rank",
        ),
        ("map-skeleton-phase", "cheat-rank-aware-logging", "cheat-metrics"),
    ),
    "skeleton.loss_falls": Template(
        "skeleton-learns",
        'The grader saw: "{evidence}". Where does your update come from, and how would you '
        "prove that it depends on the batch you fetched?",
        (
            "The loss is computed on the fetched batch's inputs and targets, every step",
            "zero_grad, backward and optimizer.step run once per step, in that order",
            "A sanity check: overfit one tiny batch, or swap the data and see the loss change",
            "Checks {lr} and the loss function before tuning anything else",
        ),
        ("map-skeleton-phase", "llm-batch-step-epoch", "llm-loss-plateau"),
    ),
    "distributed.exactly_once": Template(
        "sampler-sharding",
        'With several ranks the grader saw: "{evidence}". How does your script decide which '
        "samples each rank reads, and how would you prove that each sample is read once per "
        "epoch?",
        (
            "DistributedSampler(num_replicas=W, rank=r), or a stride over one shared permutation",
            "Every rank uses the same seed, so the shards partition one order",
            "States what happens to the remainder: drop_last, or padding that repeats samples",
            "A test: the union of the ids over ranks is the dataset, the overlap is empty",
        ),
        (*SAMPLER_CARDS, "weak-strong-data-correctness"),
    ),
    "distributed.new_order": Template(
        "sampler-epoch-order",
        'The grader saw: "{evidence}". Where does a new epoch get its new order in your script, '
        "and what would a model trained this way lose?",
        (
            "sampler.set_epoch(epoch) before each epoch: the seed is seed + epoch",
            "Every rank calls it with the same epoch, so the shards still partition the order",
            "The epoch (or the global step it follows from) is saved so a resume gets it back",
            "The same order every epoch correlates batches across epochs (worse generalization)",
        ),
        SAMPLER_CARDS,
    ),
    "distributed.params_in_sync": Template(
        "replicas-in-sync",
        'The grader compared your ranks\' parameters step by step: "{evidence}". What keeps your '
        "replicas identical, and where is the synchronization in your step?",
        (
            "The same initial weights everywhere: a seeded init (or a broadcast from rank 0)",
            "Gradients averaged across ranks before the step: DDP's all-reduce in backward",
            "Averaged, not summed: W ranks on B samples equal one process on W x B",
            "A check: parameter digests equal on every rank after a step",
        ),
        ("llm-ddp-gradient-allreduce", "map-sync-boundary", "map-correctness-invariants"),
    ),
    "distributed.rank0_prints": Template(
        "rank0-logging",
        'The grader saw: "{evidence}". Who should print what in a data-parallel job, and why?',
        (
            "Progress and metrics from rank 0 only: one line per step, not W interleaved ones",
            "Errors and warnings from every rank, tagged with the rank",
            "A metric that differs per rank (loss, step time) is reduced before rank 0 logs it",
        ),
        ("cheat-rank-aware-logging", "cheat-metrics", "map-step-phases"),
    ),
    "restart.resumes_at_checkpoint": Template(
        "resume-where",
        "Rank {killed_rank} was killed after step {killed_after} and the job was relaunched with "
        "the same arguments. The newest complete checkpoint was step {expected_step}, and your "
        "run {resume_phrase}. What did your resume look for in --ckpt-dir, and what should it "
        "have found?",
        (
            "Your job wrote {ckpt_writes}: the resume lists them and takes the newest complete one",
            "Newest by the step number parsed from the name, not by string order or mtime",
            "Loads weights, optimizer state and step together, and continues the step counter",
            "Resumes by itself with the same arguments; a fresh start only when none exists",
        ),
        ("llm-resume-after-crash", "hard-resume-correctness", "llm-checkpoint-contents"),
    ),
    "restart.no_replay_or_skip": Template(
        "resume-sampler-position",
        "After your resume from step {resumed_step}, rank {replay_rank} fetched {replay_fetched} "
        "for step {replay_step}, where the uninterrupted run fetched {replay_expected} "
        "({replay_what}). Where does your script keep the sampler's position, and what exactly "
        "does a resume restore?",
        (
            "The position is the epoch plus the offset into that epoch's order, not the epoch",
            "set_epoch(epoch) and the same seed rebuild the order; consumed batches are skipped",
            "The position is saved with the weights, or derived from the saved global step",
            "Checked by comparing the ids fetched after a resume with an uninterrupted run's",
        ),
        ("map-sampler-state-correctness", "llm-resume-after-crash", "cheat-restart-state-symptoms"),
    ),
    "restart.matches_uninterrupted": Template(
        "resume-full-state",
        "After the resume your parameters left the uninterrupted run's at step {diff_step}: "
        '"{evidence}". Which piece of state did your checkpoint miss, and how would you have '
        "found it yourself?",
        (
            "The full state: weights, {optimizer} state, LR schedule, every rank's RNG, the step",
            "Symptom to state: other samples = sampler, other gradients = RNG, other update = "
            "optimizer",
            "A bitwise comparison of a resumed run with an uninterrupted one at the same W",
            "--steps counts from step 0, so a resumed run stops where an uninterrupted one does",
        ),
        ("hard-resume-bitwise-drift", "llm-resume-optimizer-state", "cheat-restart-state-symptoms"),
    ),
    "restart.single_writer": Template(
        "single-writer",
        'The grader watched your checkpoint writes: "{evidence}". Who should write which '
        "checkpoint file, and what goes wrong when several ranks write one path?",
        (
            "One writer per file: rank 0 when the replicas are identical, or one file per rank",
            "Collectives the save needs (gathering RNG states) run on every rank, before the guard",
            "Concurrent writers interleave or truncate one file; a reader may see a mix",
            "A barrier after the save before anyone reads or deletes checkpoints",
        ),
        ("hard-checkpoint-atomicity", "llm-checkpoint-contents", "cheat-rank-aware-logging"),
    ),
    "torn.previous_checkpoint_used": Template(
        "torn-checkpoint",
        "The grader killed your job while it wrote {torn_file} ({torn_bytes} bytes on disk); "
        "the relaunch {resume_phrase}. How does your resume tell a complete checkpoint from a "
        "half-written one?",
        (
            "Write to a temp file, fsync, then an atomic rename (os.replace) in the same directory",
            "A save of several files commits with a marker or manifest written last",
            "The resume considers committed checkpoints only and ignores temp files",
            "Keeps the previous checkpoint until the new one is committed",
        ),
        ("hard-checkpoint-atomicity", "llm-robust-multinode-run", "llm-resume-after-crash"),
    ),
    "torn.finishes": Template(
        "torn-finish",
        'After a save was torn and the job relaunched, the grader saw: "{evidence}". What did '
        "your relaunch load, and where does it stop?",
        (
            "A torn file is never loaded: completeness comes from the commit, not the file's name",
            "A checkpoint that fails to load is skipped for the previous one, with a warning",
            "The run stops at global step N counted from 0, also after a resume",
        ),
        ("hard-checkpoint-atomicity", "llm-resume-after-crash", "hard-resume-correctness"),
    ),
    "monitoring.named_phases": Template(
        "step-phases",
        'Your step lines had {phase_count} phases: "{evidence}". Which phases would you time in '
        "a step, and which question does each one answer?",
        (
            "At least data wait, forward, backward (with its all-reduce), optimizer, checkpoint",
            "Each phase answers one question: input-bound? compute-bound? communication-bound?",
            "On a GPU, synchronize (or use events) before reading the clock, or the times lie",
            "The phases add up to the step time, so nothing hides between them",
        ),
        ("map-step-phases", "cheat-metrics", "map-gpu-phase-timing"),
    ),
    "monitoring.phases_add_up": Template(
        "phases-add-up",
        'Your phases ({phase_list}) did not add up to your step time: "{evidence}". Which '
        "part of the step is untimed or timed twice?",
        (
            "One clock reading per boundary: each phase ends where the next begins",
            "Everything in the step belongs to a phase (logging and checkpointing included)",
            "step_time is measured over the same span as the phases",
        ),
        ("map-step-phases", "map-gpu-phase-timing", "llm-low-gpu-util-phases"),
    ),
}

# When every failed check says the script was not compiled, or made no optimizer step, one
# question asks about that instead of one per phase; a hang replaces the check's own question.
GATE_NOT_COMPILED = Template(
    "does-not-compile",
    'Your script was never run: "{evidence}". What would you have run before handing it in, '
    "and what do you do with the last minutes when the code is not whole yet?",
    (
        "Runs the file end to end early and often (one process, tiny N) instead of at the end",
        "Keeps a working version: extend a running skeleton rather than write it all, then run",
        "Under time pressure, cuts scope and says so, rather than leaving code that cannot run",
    ),
    ("map-self-check", "map-short-on-time", "map-skeleton-phase"),
)
GATE_NO_OPTIMIZER_STEP = Template(
    "no-optimizer-step",
    'Every phase failed the same way: "{evidence}". Where does your script update the weights, '
    "and why does the grader insist on a torch.optim step?",
    (
        "The update is a torch.optim optimizer's step() after backward, once per training step",
        "The optimizer is built over the model's parameters (after wrapping them, when sharded)",
        "Without an optimizer step nothing learns, and there is no optimizer state to checkpoint",
    ),
    ("map-skeleton-phase", "map-one-step", "llm-checkpoint-contents"),
)
HANG = Template(
    "hang",
    'Your run stopped making progress: "{evidence}". Which collective were the ranks waiting '
    "in, and how would you make such a hang fail loudly and name the rank?",
    (
        "A collective that not every rank calls, or calls in another order, blocks the others",
        "Typical sources: a rank-0-only branch around a collective, uneven batch counts per rank",
        "A timeout on the process group (or a monitored_barrier) turns the hang into an error",
        "Stack dumps per rank (py-spy, the flight recorder) name the rank and the call",
    ),
    ("llm-midrun-hang", "llm-collective-timeouts", "llm-uneven-inputs"),
)

WHAT_IF: dict[str, Template] = {
    "torn": Template(
        "what-if-70b-checkpoint",
        "Your checkpoint is {save_phrase}, holding {ckpt_keys}. The same code now trains a "
        "70B-parameter model on 64 GPUs: with {optimizer} that is about {size_70b} of fp32 "
        "weights and optimizer state. What happens at your next save (memory, time, what the "
        "other 63 ranks do), and what would you change?",
        (
            "Sizes it: 70B x {bytes_per_param} bytes is about {size_70b}; rank 0 cannot gather "
            "that into one state_dict (more than a node's GPU memory, and its host RAM)",
            "One writer at about 2 GB/s takes some {write_minutes} minutes while every other rank "
            "waits at the next collective",
            "Shards the save: each rank writes its own part (torch.distributed.checkpoint), "
            "optionally async (stage to CPU, write in the background)",
            "Keeps it atomic across many files: metadata or a commit marker written last, and "
            "the resume takes committed checkpoints only",
            "Re-picks the checkpoint interval from the save's cost and the failure rate",
        ),
        (
            "llm-sharded-checkpoints-dcp",
            "hard-checkpoint-atomicity",
            "hard-checkpoint-frequency",
            "llm-memory-breakdown",
        ),
        "torn.previous_checkpoint_used",
        "Your save survived a kill in the middle of writing it: the relaunch {resume_phrase}.",
    ),
    "restart": Template(
        "what-if-world-size-change",
        "Your checkpoint holds {ckpt_keys}, and the data position comes back from "
        "{position_source}. Now the job restarts from the step-{resumed_step} checkpoint on 3 "
        "ranks instead of 2. What does your saved position mean then: which samples does step "
        "{next_step} read, what is replayed or skipped, and what would you save or refuse "
        "instead?",
        (
            "At W=2, step {resumed_step} is {w2_position} ({steps_per_epoch_w2} steps per "
            "epoch); at W=3 an epoch has {steps_per_epoch_w3} steps, so the same step reads as "
            "{w3_position}: samples are skipped or replayed",
            "Saves the position in world-size-free units: epoch and samples consumed of the "
            "global order (with the seed), then re-shards the rest over the new ranks",
            "Per-rank state does not map: 2 RNG states for 3 ranks; decides what the new ranks "
            "get and accepts that the run is no longer bitwise the 2-rank one",
            "The global batch changes ({global_batch_w2} to {global_batch_w3} samples per step): "
            "adjusts the LR or the per-rank batch on purpose",
            "Stores the world size, batch and seed in the checkpoint and refuses (or remaps on "
            "purpose) an incompatible resume",
        ),
        (
            "hard-world-size-change",
            "map-sampler-state-correctness",
            "map-checkpoint-metadata",
            "hard-resume-bitwise-drift",
        ),
        "restart.no_replay_or_skip",
        "Your resume is exact at W=2: rank {killed_rank} was killed after step {killed_after} "
        "and the relaunch went on from step {resumed_step} with the uninterrupted run's samples "
        "and weights.",
    ),
    "monitoring": Template(
        "what-if-straggler",
        "Late in a run, rank 1's step time doubles and stays there; the other ranks' hardware is "
        "unchanged. Which of your logged phases ({phase_list}) shows it, on which rank, and how "
        "would you find out that it is rank 1?",
        (
            "Every rank waits for the slow one at the gradient all-reduce: on rank 0 that time "
            "lands in {sync_phase}, and step_time doubles on every rank",
            "Rank 0's lines show that the step slowed, not which rank: logs per-rank phase "
            "times (all_gather them, report the slowest rank and max/min)",
            "Tells compute from waiting: the slow rank's own compute ({compute_phase}) grows, "
            "the others' wait in the collective grows",
            "Checks the slow rank's {data_phase} and host first (loader, disk, a noisy "
            "neighbour, thermals), then its link",
        ),
        ("map-straggler", "map-step-phases", "cheat-rank-aware-logging", "map-gpu-phase-timing"),
        "monitoring.phases_add_up",
        "Your step lines log {phase_count} named phases that add up to the step time.",
    ),
    "distributed": Template(
        "what-if-optimizer-under-fsdp",
        "You train with {optimizer} over {wrapper}; its state is {optimizer_state}. {fsdp_lead} "
        "What does each rank's {optimizer} hold then, what changes in when you build it and how "
        "you save its state, and would you keep {optimizer}?",
        (
            "Builds {optimizer} after fully_shard, over the sharded (DTensor) parameters: each "
            "rank holds the state of its own shard only ({state_bytes} bytes/param, divided by W)",
            "optimizer.state_dict() is per shard: saves it with torch.distributed.checkpoint "
            "(get_state_dict / set_state_dict), every rank writing its part",
            "Anything that needs all gradients (clip_grad_norm_, a NaN check, the logged grad "
            "norm) reduces across shards",
            "Weighs the state's memory against the alternatives: fewer-state optimizers, 8-bit "
            "state, CPU offload, and what each costs",
        ),
        (
            "hard-ddp-or-fsdp",
            "llm-zero-stages",
            "llm-fsdp2-fully-shard",
            "llm-memory-16-bytes-autocast",
            "llm-optimizer-offload",
        ),
        "distributed.params_in_sync",
        "Your ranks each read their own shard and stayed identical step by step.",
    ),
    "skeleton": Template(
        "what-if-64-ranks",
        "You train with {optimizer} at {lr}, {batch} samples per rank per step. At W=2 a step "
        "trains {global_batch_w2} samples; at 64 ranks {global_batch_64}, and an epoch has 32 "
        "times fewer steps. What do you do with the learning rate and --steps, and how do you "
        "show that the 64-rank run still learns like the small one?",
        (
            "Global batch = per-rank batch x W (x accumulation): every step sees 32x more data "
            "than at W=2",
            "Scales the LR on purpose (about linear for SGD, gentler for Adam) with a warmup, or "
            "keeps the global batch fixed with a smaller per-rank batch",
            "Compares runs per sample (or token) seen, not per step; re-derives --steps and the "
            "schedule from the sample budget",
            "Knows the limit: past the critical batch size more ranks buy little per sample",
        ),
        ("llm-batch-size-and-lr", "map-one-step", "llm-warmup-why", "llm-grad-accum-correctness"),
        "skeleton.loss_falls",
        "Your one-process run took the loss from {loss_first} to {loss_last} in {single_steps} "
        "steps.",
    ),
}
WHAT_IF_ORDER = ("torn", "restart", "monitoring", "distributed", "skeleton")

# torch.optim class -> (what its state holds, fp32 bytes of state per parameter)
OPTIMIZER_STATE: dict[str, tuple[str, int]] = {
    "Adam": ("two moments per parameter (exp_avg, exp_avg_sq) and a step count", 8),
    "AdamW": ("two moments per parameter (exp_avg, exp_avg_sq) and a step count", 8),
    "NAdam": ("two moments per parameter and a step count", 8),
    "RAdam": ("two moments per parameter and a step count", 8),
    "Adamax": ("a moment and an infinity norm per parameter", 8),
    "SGD": ("a momentum buffer per parameter (none without momentum)", 4),
    "RMSprop": ("a square average per parameter", 4),
    "Adagrad": ("a sum of squares per parameter", 4),
    "Adadelta": ("two running averages per parameter", 8),
}

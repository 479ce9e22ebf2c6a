"""The preemption round's follow-up table (drill.mock.coding.catalogue joins it with
trainer_lab's entry "preemption"): the question each failed check asks, and the harder question
a phase that held leads to. Placeholders are followup_table.FACT_KEYS."""

from __future__ import annotations

from drill.mock.coding.followup_table import Template
from drill.mock.coding.phases import CodingPhase

SIGTERM_CARDS = ("infra-preemption-sigterm", "infra-requeue-resume")
RESUME_CARDS = ("infra-requeue-resume", "cheat-rng-state", "llm-resume-optimizer-state")
ATOMIC_CARDS = ("hard-checkpoint-atomicity", "infra-preemption-sigterm")

FAILED: dict[str, Template] = {
    "stop.exits_0_in_grace": Template(
        "preempt-exit",
        'Your ranks did not leave cleanly after SIGTERM: "{evidence}". What does each rank do '
        "from the signal to its exit, and how long does it take?",
        (
            "A handler on every rank, installed before training starts, that only sets a flag",
            "Save, destroy the process group, return 0 (a non-zero exit reads as a failure)",
            "Everything between the signal and exit fits the grace period (no sleeps, no eval)",
        ),
        SIGTERM_CARDS,
    ),
    "stop.stop_together": Template(
        "preempt-agree",
        'Your ranks did not stop together: "{evidence}". The signal reaches them at different '
        "points of a step: how do they agree on the last step?",
        (
            "After each step, an all_reduce(MAX) of the flag (or the flag in the grad reduce)",
            "Every rank stops after the same step; one rank saves that step's state",
            "A rank that leaves alone strands the others in a collective",
        ),
        SIGTERM_CARDS,
    ),
    "requeue.resumes_where_stopped": Template(
        "preempt-resume",
        'The requeued job did not start where the preempted one stopped: "{evidence}". What '
        "does your checkpoint at SIGTERM hold, and how does the relaunch find it?",
        (
            "The checkpoint at the signal is the state after the last step (model, optimizer)",
            "The saved step counts the steps in that state: no step redone or skipped",
            "The relaunch takes the newest checkpoint by step number",
        ),
        RESUME_CARDS,
    ),
    "requeue.bit_for_bit": Template(
        "preempt-bit-for-bit",
        'After the requeue your run differs from an uninterrupted one: "{evidence}". What must '
        "the checkpoint hold for the continuation to be bit for bit?",
        (
            "The data position in the given order (epoch and offset), not just the step",
            "torch's RNG state (the dropout masks), restored before the next step",
            "The optimizer state (Adam's moments), restored with the model",
        ),
        RESUME_CARDS,
    ),
    "again.exits_0_in_grace": Template(
        "preempt-second-signal",
        'A second SIGTERM during the save changed how your ranks ended: "{evidence}". What '
        "happens in your handler when it runs twice?",
        (
            "The handler stays installed and only sets the flag again (idempotent)",
            "No I/O and no save inside the handler: the second signal cannot re-enter the save",
            "The save in progress finishes and every rank still exits 0 in the grace period",
        ),
        ATOMIC_CARDS,
    ),
    "again.resumes_complete": Template(
        "preempt-torn-save",
        'After a SIGTERM in the middle of the save the requeue went wrong: "{evidence}". How '
        "does your relaunch tell a complete checkpoint from a half-written one?",
        (
            "Write to a temporary name and rename when complete (or a marker written last)",
            "The relaunch only considers complete checkpoints, the newest by step",
            "A cut-short save leaves the previous checkpoint as the newest",
        ),
        ATOMIC_CARDS,
    ),
    "requeue.drill_data_order": Template(
        "preempt-given-order",
        'Your uninterrupted run did not read the given order: "{evidence}". Which samples does '
        "each rank read at step k, and which epoch's order are they from?",
        (
            "Epoch e reads epoch_order(e): the epoch counter starts at 0 and only goes up",
            "Global step k of the epoch takes the k-th W*B ids; rank r the r-th B of them",
            "The remainder is dropped; the next epoch starts from its beginning",
        ),
        ("map-sampler-state-correctness", "infra-requeue-resume"),
    ),
    "requeue.saves_every_c": Template(
        "preempt-periodic-save",
        'Your uninterrupted run did not checkpoint after every C-th step: "{evidence}". Why '
        "keep periodic checkpoints when SIGTERM already triggers a save?",
        (
            "Not every end gives notice: a crash, an OOM kill or a lost node saves nothing",
            "The save condition is step % C == 0 on the count of steps done",
            "The newest complete checkpoint bounds the work lost to C steps",
        ),
        ("infra-requeue-resume", "hard-checkpoint-atomicity"),
    ),
}

WHAT_IF: dict[str, Template] = {
    "stop": Template(
        "preempt-what-if-big",
        "Your trainer saves within the grace period at this size. At 70 B parameters on 512 "
        "GPUs with a 30 s grace, what do you do at SIGTERM?",
        (
            "A full save may not fit: rely on frequent periodic (async) checkpoints",
            "Sharded saves, each rank its part, to node-local storage first",
            "Know the smallest budget: the scheduler's, torchrun's shutdown timeout",
        ),
        SIGTERM_CARDS,
        check="stop.exits_0_in_grace",
    ),
    "requeue": Template(
        "preempt-what-if-world",
        "Your requeue continued bit for bit at the same W. The requeued job gets 3 ranks "
        "instead of 2: what still holds, and what can no longer be bit for bit?",
        (
            "The data position is global (samples consumed), so it maps to any W",
            "The global batch is kept (per-rank batch or accumulation changes)",
            "A different reduction order changes float sums: exact only up to rounding",
        ),
        RESUME_CARDS,
        check="requeue.bit_for_bit",
    ),
}

WHAT_IF_ORDER = ("requeue", "stop")

# The round's time table (45 min, as its catalogue entry says): one round phase per grader
# phase, then the pushback while everything is graded.
PHASES = (
    CodingPhase("clarify", "Clarify assumptions", 5, ()),
    CodingPhase("stop", "SIGTERM: agree, save, exit", 12, ("stop",)),
    CodingPhase("requeue", "Requeue bit for bit", 10, ("requeue",)),
    CodingPhase("again", "A second SIGTERM during the save", 8, ("again",)),
    CodingPhase("pushback", "Full grading and pushback", 10, ("stop", "requeue", "again")),
)
TALK = {
    "clarify": "clarify",
    "stop": "distributed",
    "requeue": "skeleton",
    "again": "operate",
    "pushback": "pushback",
}
TOPICS = ("preemption", "checkpoint", "resume", "signals", "determinism")
RUN_ARGS = "--steps 12 --ckpt-dir ckpt --ckpt-every 4"

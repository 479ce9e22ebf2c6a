"""The FSDP2-first round's follow-up table (drill.mock.coding.catalogue joins it with
trainer_lab's entry "fsdp2"): the question each failed check asks, and the harder question a
phase that held leads to, and the round's time table. Placeholders are followup_table.FACT_KEYS."""

from __future__ import annotations

from drill.mock.coding.followup_table import Template
from drill.mock.coding.phases import CodingPhase

SHARD_CARDS = ("llm-fsdp2-fully-shard", "infra-fsdp2-prefetch-reshard", "llm-zero-stages")
DCP_CARDS = ("llm-sharded-checkpoints-dcp", "hard-checkpoint-atomicity")
RESHARD_CARDS = ("frontier-checkpoint-resharding", "hard-world-size-change")

FAILED: dict[str, Template] = {
    "sharded.per_block": Template(
        "fsdp2-per-block",
        'Your model is not sharded per block: "{evidence}". What does fully_shard on each '
        "block buy you over the root alone, and in which order do you call it?",
        (
            "Each block its own unit: gathered just before it runs, freed after (peak memory)",
            "Its gradients reduce-scattered while earlier blocks still run backward (overlap)",
            "fully_shard the blocks first, then the root (the rest of the parameters)",
            "Build the optimizer after fully_shard: it must hold the DTensor parameters",
        ),
        SHARD_CARDS,
    ),
    "sharded.trains": Template(
        "fsdp2-trains",
        'Your W=2 run did not train as one process would on the same batch: "{evidence}". '
        "Walk me through one step: which collectives run, and what does each rank hold?",
        (
            "Forward: all-gather each unit's shards; backward: reduce-scatter (average) grads",
            "The optimizer steps only this rank's shard of every parameter",
            "Each rank trains GLOBAL_BATCH // W samples, disjoint, every sample once an epoch",
        ),
        SHARD_CARDS,
    ),
    "dcp.every_rank_writes": Template(
        "fsdp2-dcp-save",
        'Your checkpoint is not a sharded DCP save: "{evidence}". Why not gather the full '
        "state on rank 0, and what does each rank write with torch.distributed.checkpoint?",
        (
            "A full gather needs the whole model (and Adam's 2x) in one rank's memory",
            "dcp.save: every rank writes its own shard; .metadata maps the global tensors",
            "The optimizer state is sharded too: save it the same way (get_state_dict)",
        ),
        DCP_CARDS,
    ),
    "dcp.atomic": Template(
        "fsdp2-dcp-atomic",
        'A save cut short broke your restart: "{evidence}". How does a relaunch know which '
        "sharded checkpoint is complete when every rank writes its own file?",
        (
            "Write into a temporary directory; rename it once every rank has finished",
            "Or a commit marker written by one rank after a barrier, checked on load",
            "The relaunch takes the newest complete checkpoint by step number",
        ),
        DCP_CARDS,
    ),
    "reshard.resumes_newest": Template(
        "fsdp2-resume-newest",
        'Your relaunch at W=3 did not resume from the newest checkpoint: "{evidence}". How '
        "does it find that checkpoint and the step to continue from?",
        (
            "The newest complete checkpoint by step number, never by name order",
            "The saved step counts the steps in that state: no step redone or skipped",
            "dcp.load into this W's state dict reshards each tensor (W=2 -> 3)",
        ),
        RESHARD_CARDS,
    ),
    "reshard.global_batch": Template(
        "fsdp2-global-batch",
        'At W=3 your run trained on other samples than an uninterrupted one: "{evidence}". '
        "What stays fixed when the world size changes, and how is the position stored?",
        (
            "The global batch stays; the per-rank batch is GLOBAL_BATCH // W",
            "The position is global (step or samples consumed), mapped to any W on resume",
            "The epoch's order depends on the epoch only, never on W or the rank count",
        ),
        RESHARD_CARDS,
    ),
    "reshard.continues": Template(
        "fsdp2-continues",
        'After the resume at W=3 your model left the uninterrupted run\'s path: "{evidence}". '
        "What must the checkpoint hold, and what can differ only by rounding?",
        (
            "The optimizer state (Adam's moments and step), saved and loaded sharded",
            "The LR schedule's position with the step",
            "Another reduction order at W=3 changes float sums: equal within rounding only",
        ),
        ("llm-resume-optimizer-state", *RESHARD_CARDS),
    ),
}

WHAT_IF: dict[str, Template] = {
    "sharded": Template(
        "fsdp2-what-if-memory",
        "At 70 B parameters on 64 GPUs with AdamW, what does each GPU hold, and what would you "
        "change when the all-gathers stop overlapping?",
        (
            "Parameters, gradients and Adam's moments are each 1/64 (ZeRO-3)",
            "Peak: the largest unit's gathered parameters plus activations",
            "Prefetch the next unit, reshard_after_forward=False for the last blocks, HSDP",
        ),
        (*SHARD_CARDS, "num-memory-adamw-sharded"),
        check="sharded.per_block",
        lead="Your blocks are sharded.",
    ),
    "reshard": Template(
        "fsdp2-what-if-reshard",
        "The requeued job now gets 2 nodes of 8 GPUs instead of 4: what does your checkpoint "
        "need, and what would you not resume bit for bit?",
        (
            "DCP reshards on load: the global tensors and their offsets are in .metadata",
            "The global batch by accumulation steps when W * per-rank batch cannot match",
            "A different reduction order: equal only up to rounding",
        ),
        RESHARD_CARDS,
        check="reshard.continues",
        lead="Your run resumed at W=3 on the uninterrupted run's path.",
    ),
}

WHAT_IF_ORDER = ("reshard", "sharded")

# The round's time table (45 min, as its catalogue entry says): one round phase per grader
# phase, then the pushback while everything is graded.
PHASES = (
    CodingPhase("clarify", "Clarify assumptions", 5, ()),
    CodingPhase("sharded", "fully_shard per block", 12, ("sharded",)),
    CodingPhase("dcp", "A sharded DCP checkpoint", 10, ("dcp",)),
    CodingPhase("reshard", "Resume at W=3", 8, ("reshard",)),
    CodingPhase("pushback", "Full grading and pushback", 10, ("sharded", "dcp", "reshard")),
)
TALK = {
    "clarify": "clarify",
    "sharded": "distributed",
    "dcp": "operate",
    "reshard": "skeleton",
    "pushback": "pushback",
}
TOPICS = ("fsdp2", "fsdp", "sharding", "dcp", "checkpoint", "resume")
RUN_ARGS = "--steps 20 --ckpt-dir ckpt --ckpt-every 4"

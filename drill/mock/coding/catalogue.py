"""The coding round's prompts as the app sees them: trainer_lab's catalogue
(trainer_lab.grading.prompts: contract, phases, checks, starter, answers, grader) joined with each
prompt's follow-up table (the questions a failed check or a phase that held leads to).

    entry = round_prompt("eval"); entry.title, entry.minutes, entry.phases, entry.followups.failed

"ddp" is today's round, its table drill.mock.coding.followup_table; "eval" (distributed
evaluation) has its table here; "preemption" its own module, followups_preempt.py; "fsdp2"
followups_fsdp2.py; "biotech" (a protein-sequence data pipeline) followups_biotech.py. Unknown
names are a MockError naming the known ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drill.mock.coding import (
    followup_table,
    followups_biotech,
    followups_fsdp2,
    followups_preempt,
)
from drill.mock.coding.followup_table import Template
from drill.mock.coding.phases import CODING_PHASES, STANDARD_PHASE, CodingPhase
from drill.mock.errors import MockError
from trainer_lab.grading import DEFAULT_PROMPT, PROMPT_IDS, get_prompt


@dataclass(frozen=True)
class FollowupTable:
    failed: Mapping[str, Template]  # check name -> the question its failure asks
    what_if: Mapping[str, Template]  # phase -> the harder question a phase that held leads to
    what_if_order: tuple[str, ...]


@dataclass(frozen=True)
class RoundPrompt:
    id: str
    title: str
    minutes: int
    prompt: str
    phases: tuple[str, ...]
    check_names: Mapping[str, tuple[str, ...]]
    followups: FollowupTable
    entry: Any  # trainer_lab.grading.prompts.Prompt: contract, starter, answers, grade
    round_phases: tuple[CodingPhase, ...] = CODING_PHASES  # the round's time table, pushback last
    # round phase -> the standard round's phase whose prompts and rubric cover its talk
    talk_phases: Mapping[str, str] = field(default_factory=lambda: dict(STANDARD_PHASE))
    run_args: str = "--steps 16 --ckpt-dir ckpt"  # a notebook's torchrun cell, after train.py
    topics: tuple[str, ...] = ()  # the deck tags it exercises (readiness topics: the suggestion)

    @property
    def contract(self) -> str:
        return str(self.entry.contract)

    @property
    def all_grader_phases(self) -> tuple[str, ...]:
        """What the pushback and the round's end grade: every grader phase (the last round
        phase's)."""
        return self.round_phases[-1].grades

    @property
    def pushback_index(self) -> int:
        """The pushback's round phase (the last): follow-ups about the user's code."""
        return len(self.round_phases) - 1

    def starter(self) -> str:
        return str(self.entry.starter())

    def dataset(self) -> str:
        """The given dataset module's source (drill_data.py beside train.py)."""
        return str(self.entry.dataset())

    def grader_phases(self, chosen: list[str] | None) -> list[str]:
        """--phase as given (default: every phase of this prompt); an unknown one is a
        MockError naming this prompt's phases."""
        phases = list(chosen or self.phases)
        unknown = [p for p in phases if p not in self.phases]
        if unknown:
            raise MockError(
                f"unknown phase {unknown[0][:40]!r} for prompt {self.id}; phases: "
                f"{', '.join(self.phases)}"
            )
        return phases

    def summary(self) -> str:
        """One line for a picker or --help: id, title, length."""
        return f"{self.id}: {self.title} ({self.minutes} min)"


DDP_FOLLOWUPS = FollowupTable(
    followup_table.FAILED, followup_table.WHAT_IF, followup_table.WHAT_IF_ORDER
)

EVAL_CARDS = ("infra-dist-eval-padding", "infra-dist-eval-mean-of-means", "infra-dist-eval-dedup")
BEST_CARDS = ("map-checkpoint-metadata", "hard-checkpoint-atomicity")

EVAL_FOLLOWUPS = FollowupTable(
    failed={
        "exact.count_is_eval_size": Template(
            "eval-count",
            'Your eval counted the wrong number of samples: "{evidence}". Where do the extra '
            "or missing samples come from, and how do you count each one exactly once?",
            (
                "DistributedSampler pads the shards to equal length by repeating samples",
                "Shard without padding (ids rank::W) or drop the duplicates by sample id",
                "Every rank evaluates its shard; the totals are all-reduced",
                "The count is reported and checked against len(eval set)",
            ),
            EVAL_CARDS,
        ),
        "exact.same_at_every_world_size": Template(
            "eval-exact",
            'Your metrics change with the world size: "{evidence}". How do you reduce them so '
            "that W=1, 2 and 3 give the same numbers?",
            (
                "All-reduce sums (loss sum, correct, count), divide once at the end",
                "A mean of per-rank means is wrong when the shards are unequal (13 vs 12)",
                "Padded duplicates are counted twice unless masked or deduplicated by id",
                "Sum in float64: the order of a float32 sum changes with W",
            ),
            EVAL_CARDS,
        ),
        "during.trains": Template(
            "eval-trains",
            'Your training run did not end as the contract asks: "{evidence}". Walk me through '
            "how it stops at exactly --steps and resumes from DIR.",
            (
                "The loop is bounded by the global step, counted from 0 across restarts",
                "The checkpoint holds model, optimizer and step; resume reads the newest",
                "Every rank joins each eval's collectives, or the run hangs",
            ),
            ("map-checkpoint-metadata",),
        ),
        "during.evals_every_e": Template(
            "eval-during",
            'Your evals during training were not as expected: "{evidence}". When does your '
            "training loop evaluate, and what does every rank do meanwhile?",
            (
                "Eval after every E-th step and after the last, on every rank",
                "model.eval() and no_grad during eval, model.train() after",
                "Only rank 0 prints; every rank computes its shard",
            ),
            EVAL_CARDS[:2],
        ),
        "best.survives_restart": Template(
            "eval-best-restart",
            'After the restart your best checkpoint changed: "{evidence}". Where does your best '
            "metric live, and how does a relaunch know it?",
            (
                "The best metric and its step are stored in DIR with the best model",
                "A relaunch reads them back before its first eval",
                "The best is chosen by the metric's value, never by file name order",
                "Written by one rank, atomically (temp file and rename)",
            ),
            BEST_CARDS,
        ),
        "best.checkpoint_is_best": Template(
            "eval-best-file",
            'The model in your best checkpoint is not the best one: "{evidence}". How do you '
            "make the file and the metric you report agree?",
            (
                "Save the model in the same step that updates the best metric",
                "One file (or a committed pair) per best, found without sorting names as strings",
                "--eval-only loads that file and reproduces the best loss",
            ),
            BEST_CARDS,
        ),
    },
    what_if={
        "exact": Template(
            "eval-what-if-scale",
            "Your eval is exact at W=3. At 512 GPUs with a 2 M sample eval set, what does your "
            "reduction cost, and would you gather per-sample results?",
            (
                "Reduce three numbers, not per-sample tensors",
                "Gathering per-sample rows scales with the set; dedupe by id only when padding",
                "Eval every E steps costs E/eval-time: shard it, keep it off the critical path",
            ),
            EVAL_CARDS,
            check="exact.same_at_every_world_size",
        ),
        "best": Template(
            "eval-what-if-best",
            "Your best checkpoint survived a killed rank. What if the job dies while the best "
            "file is being written?",
            (
                "Write to a temp file and rename: the old best stays until the new one is whole",
                "Metric and model committed together (one file, or a marker after both)",
                "Keep the best apart from the rolling checkpoints (not deleted by retention)",
            ),
            BEST_CARDS,
            check="best.survives_restart",
        ),
    },
    what_if_order=("best", "exact"),
)

PREEMPT_FOLLOWUPS = FollowupTable(
    followups_preempt.FAILED, followups_preempt.WHAT_IF, followups_preempt.WHAT_IF_ORDER
)

_TABLES: dict[str, FollowupTable] = {
    "ddp": DDP_FOLLOWUPS,
    "eval": EVAL_FOLLOWUPS,
    "preemption": PREEMPT_FOLLOWUPS,
    "fsdp2": FollowupTable(
        followups_fsdp2.FAILED, followups_fsdp2.WHAT_IF, followups_fsdp2.WHAT_IF_ORDER
    ),
    "biotech": FollowupTable(
        followups_biotech.FAILED, followups_biotech.WHAT_IF, followups_biotech.WHAT_IF_ORDER
    ),
}

# The evaluation round's time table (45 min, as its catalogue entry says): one round phase per
# grader phase, then the pushback while everything is graded; talked through as the standard
# round's phases of the same kind.
EVAL_PHASES = (
    CodingPhase("clarify", "Clarify assumptions", 5, ()),
    CodingPhase("exact", "Exact metrics over a sharded eval set", 12, ("exact",)),
    CodingPhase("during", "Eval during training", 10, ("during",)),
    CodingPhase("best", "Best checkpoint across restarts", 8, ("best",)),
    CodingPhase("pushback", "Full grading and pushback", 10, ("exact", "during", "best")),
)
EVAL_TALK = {
    "clarify": "clarify",
    "exact": "distributed",
    "during": "skeleton",
    "best": "operate",
    "pushback": "pushback",
}
_ROUNDS: dict[str, dict[str, Any]] = {
    "ddp": {"topics": ("ddp", "sampler", "checkpoint", "resume", "torchrun")},
    "eval": {
        "topics": ("evaluation", "metrics", "sampler", "checkpoint"),
        "round_phases": EVAL_PHASES,
        "talk_phases": EVAL_TALK,
        "run_args": "--steps 16 --ckpt-dir ckpt --ckpt-every 4 --eval-every 4",
    },
    "preemption": {
        "topics": followups_preempt.TOPICS,
        "round_phases": followups_preempt.PHASES,
        "talk_phases": followups_preempt.TALK,
        "run_args": followups_preempt.RUN_ARGS,
    },
    "fsdp2": {
        "topics": followups_fsdp2.TOPICS,
        "round_phases": followups_fsdp2.PHASES,
        "talk_phases": followups_fsdp2.TALK,
        "run_args": followups_fsdp2.RUN_ARGS,
    },
    "biotech": {
        "topics": followups_biotech.TOPICS,
        "round_phases": followups_biotech.PHASES,
        "talk_phases": followups_biotech.TALK,
        "run_args": followups_biotech.RUN_ARGS,
    },
}


def round_prompt(name: str = DEFAULT_PROMPT) -> RoundPrompt:
    """The catalogue's entry `name` with its follow-up table; MockError for an unknown name."""
    if name not in PROMPT_IDS:
        raise MockError(f"unknown prompt {name[:40]!r}; prompts: {', '.join(PROMPT_IDS)}")
    entry = get_prompt(name)
    return RoundPrompt(
        id=entry.id,
        title=entry.title,
        minutes=entry.minutes,
        prompt=entry.prompt,
        phases=entry.phases,
        check_names=entry.check_names,
        followups=_TABLES[name],
        entry=entry,
        **_ROUNDS[name],
    )


def catalogue() -> list[RoundPrompt]:
    """Every prompt, today's DDP round first."""
    return [round_prompt(name) for name in PROMPT_IDS]


def prompts_help() -> str:
    """The prompts, one per line, for --help."""
    return "; ".join(p.summary() for p in catalogue())


def phases_help() -> str:
    """Each prompt's grader phases, for --phase's help."""
    return "; ".join(f"{p.id}: {', '.join(p.phases)}" for p in catalogue())

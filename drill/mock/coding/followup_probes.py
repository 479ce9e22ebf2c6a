"""The next follow-up builds on the last answer (UI-free; drill.mock.coding.followup_clock asks).

An interviewer listens and digs into what the candidate just said. When an answer names a
design choice this table knows (an atomic rename, an async save, a DistributedSampler, rank 0
doing the work, a collective someone may never reach ...), the next question becomes a probe of
that choice, quoting the candidate's own words:

    You said: "we write to a temp file and os.replace it". Which fsyncs ...

The rules, one copy each:
- A probe is drawn from the answer just given (typed in time, or what was typed when time ran
  out); an empty answer draws none.
- The first choice the answer names (in the table's order) wins; a probe already in the round is
  not asked twice.
- The probe takes the next question's place and the round keeps its number of questions: the
  last question not about a failed check is left out (a failed check's question is never
  dropped; when only those are left, no probe is drawn). The last question's answer draws none.
- A probe carries its own rubric and cards, like any follow-up, so the report grades it and
  feeds its cards back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PROBE_KIND = "builds-on"
FAILED = "failed"  # a failed check's question (drill.mock.coding.followups.FAILED_KIND)
QUOTE_CHARS = 90


@dataclass(frozen=True)
class Probe:
    id: str
    pattern: str  # a regular expression, matched case-insensitively in the answer
    question: str
    rubric: tuple[str, ...]
    cards: tuple[str, ...]


PROBES: tuple[Probe, ...] = (
    Probe(
        "probe-rename",
        r"\b(os\.replace|os\.rename|rename[sd]?|atomic(ally)?)\b",
        "Which fsyncs does that need so that a power cut never leaves a checkpoint that looks "
        "complete but is not, and does a rename make a save of several files atomic?",
        (
            "fsync the file before the rename, and the directory after it",
            "a rename is atomic for one file only",
            "several files: a commit marker (or a directory rename) written last",
            "the loader picks the newest committed save, not the newest name",
        ),
        ("hard-checkpoint-atomicity",),
    ),
    Probe(
        "probe-async-save",
        r"\b(async(_save|hronous(ly)?)?|background (thread|save|write))\b",
        "What must finish before the next save starts, and if the job dies while the "
        "background write is in flight, which checkpoint does the relaunch resume from?",
        (
            "the copy to CPU memory is taken before the next step changes the weights",
            "wait on the previous save's future before starting another",
            "a save counts only once its commit is written",
            "a death mid-write resumes from the last committed save",
        ),
        ("hard-why-not-async", "llm-sharded-checkpoints-dcp"),
    ),
    Probe(
        "probe-sampler",
        r"\b(distributedsampler|set_epoch|sampler)\b",
        "What does DistributedSampler do with the last incomplete batch of an epoch, and how "
        "does your relaunch continue in the middle of an epoch without repeating samples?",
        (
            "it pads the shard by repeating samples unless drop_last",
            "set_epoch reseeds the shuffle each epoch",
            "resume from the global samples consumed, not a per-rank counter",
            "the same order on every rank from the seed and the epoch",
        ),
        ("map-sampler-state-correctness",),
    ),
    Probe(
        "probe-rank-zero",
        r"\b(rank[ _]?0|rank zero|only rank|main process)\b",
        "While rank 0 does that, what do the other ranks do, and what happens if rank 0's "
        "process is the one that dies?",
        (
            "the others wait at a barrier or go on with a collective soon",
            "a long rank-0-only stretch can hit the collective timeout",
            "rank 0's death is a failure like any other: the job restarts",
            "nothing it writes may be needed by the others until it is committed",
        ),
        ("cheat-rank-aware-logging", "llm-collective-timeouts"),
    ),
    Probe(
        "probe-collective",
        r"\b(all_?reduce|all_?gather|barrier|broadcast|collective)s?\b",
        "What happens if one rank never reaches that collective, and how would you find out "
        "which rank it was?",
        (
            "the other ranks block until the process group's timeout",
            "a watchdog or monitored_barrier names the missing rank",
            "the flight recorder or stack dumps show where each rank waits",
            "every rank must issue the same collectives in the same order",
        ),
        ("llm-nccl-hang-debug", "llm-midrun-hang"),
    ),
    Probe(
        "probe-fsdp",
        r"\b(fsdp2?|fully_shard|zero[- ]?[123]?|shard(ed|ing)?)\b",
        "What does each rank hold between steps, and what is gathered when, in the forward and "
        "in the backward?",
        (
            "each rank holds its shard of parameters, gradients and optimizer state",
            "parameters are all-gathered per unit before its forward and again for backward",
            "gradients are reduce-scattered after each unit's backward",
            "reshard_after_forward trades memory for a second all-gather",
        ),
        ("llm-zero-stages",),
    ),
    Probe(
        "probe-accumulation",
        r"\b(accumulat\w*|no_sync|micro[- ]?batch\w*)\b",
        "How do you scale each micro-batch's loss so the update equals one big batch, and "
        "when does the gradient exchange happen?",
        (
            "divide by the number of micro-batches (or by the global token count)",
            "no_sync skips the exchange on all but the last micro-batch",
            "the exchange runs once, in the last backward",
            "the optimizer steps once per global batch",
        ),
        ("llm-grad-accum-correctness",),
    ),
    Probe(
        "probe-signal",
        r"\b(sigterm|signal|preempt\w*|grace)\b",
        "How do all ranks agree to stop at the same step, and what if a second signal arrives "
        "while the save is being written?",
        (
            "the handler only sets a flag; the loop acts on it",
            "the ranks agree through a collective (an all-reduce of the flag)",
            "save once, after the same step everywhere, within the grace period",
            "a second signal must not leave a save that looks complete",
        ),
        ("infra-grace-periods",),
    ),
    Probe(
        "probe-seed",
        r"\b(seed(ed|s)?|determinis\w*|bit[- ]for[- ]bit|rng)\b",
        "What state besides the weights must a checkpoint hold for the run to continue bit for "
        "bit, and what can still differ after a resume?",
        (
            "optimizer, scheduler, sampler position and the RNG states of every rank",
            "data loader workers' RNG and shuffle order",
            "reduction order changes with the world size or bucket layout",
            "nondeterministic kernels unless deterministic algorithms are on",
        ),
        ("infra-determinism-knobs",),
    ),
    Probe(
        "probe-padding",
        r"\b(pad(ding|ded)?|bucket\w*|pack(ing|ed)?)\b",
        "How do you keep padding out of the loss and out of attention, and how do you keep "
        "the padding small?",
        (
            "mask padded targets (ignore_index) and padded keys (key_padding_mask)",
            "divide by the real tokens, not the padded length",
            "bucket by length or pack several sequences into a row",
            "packed rows need a block-diagonal mask and reset positions",
        ),
        ("bio-variable-length-collation", "frontier-packing-document-masks"),
    ),
)


def _quote(text: str, start: int, end: int) -> str:
    """The sentence of `text` (one line) holding [start, end), cut to QUOTE_CHARS around it."""
    left = max((m.end() for m in re.finditer(r"[.!?]\s", text[:start])), default=0)
    stop = re.search(r"[.!?](\s|$)", text[end:])
    sentence = text[left : end + stop.start() + 1 if stop else len(text)].strip().rstrip(".!?")
    if len(sentence) <= QUOTE_CHARS:
        return sentence
    at = max(0, min(start - left - QUOTE_CHARS // 3, len(sentence) - QUOTE_CHARS))
    cut = sentence[at : at + QUOTE_CHARS].strip()
    return ("..." if at else "") + cut + ("..." if at + QUOTE_CHARS < len(sentence) else "")


def probe_for(answer: str, asked: set[str]) -> dict[str, Any] | None:
    """The follow-up (as a pushback entry) probing the first choice `answer` names, not yet in
    `asked` (question ids); None when it names none."""
    text = " ".join(answer.split())
    for probe in PROBES:
        if probe.id in asked:
            continue
        found = re.search(probe.pattern, text, re.IGNORECASE)
        if found is None:
            continue
        said = _quote(text, found.start(), found.end())
        return {
            "id": probe.id,
            "kind": PROBE_KIND,
            "question": f'You said: "{said}". {probe.question}',
            "rubric": list(probe.rubric),
            "cards": list(probe.cards),
            "source_check": "",
            "evidence": said,
        }
    return None


def build_on(
    questions: Sequence[Mapping[str, Any]], number: int, answer: str
) -> list[dict[str, Any]] | None:
    """The round's questions with question `number + 1` replaced by a probe of `answer` (the
    answer to question `number`, 1-based), the count kept (module rules); None when no probe
    is drawn."""
    if not answer.strip() or number >= len(questions):
        return None
    later = range(len(questions) - 1, number - 1, -1)
    dropped = next((i for i in later if questions[i].get("kind") != FAILED), None)
    if dropped is None:
        return None
    probe = probe_for(answer, {str(q.get("id", "")) for q in questions})
    if probe is None:
        return None
    probe["source_check"] = f"builds on Q{number}"
    kept = [dict(q) for i, q in enumerate(questions) if i != dropped]
    return [*kept[:number], probe, *kept[number:]]

"""Offline rubric coverage: does a typed answer state each rubric bullet?

No model, just words. Both bullet and answer are tokenized, lightly stemmed and mapped through a
table of synonym phrases to shared concept tokens ("adam moments" and "optimizer state" are the same
concept) and a table of related words ("refuse" states "reject"). A bullet is read as parts
separated by commas, each of them needed, whose alternatives are separated by " or " (any one
suffices); an alternative is present only when every one of its content terms is in the answer
(generic qualifiers such as "state" or "explicit" excepted): naming two of a bullet's three things
is not stating it, so "model, optimizer, scheduler, scaler state" needs the scaler too. A word in
the scope of a negation is marked negated on both sides: "no sampler state" does not cover "sampler
state", while "no replay" covers "no silent replay". The result only pre-checks a checklist the
user corrects; a bullet partly named is shown as a hint, never checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Coverage(StrEnum):
    COVERED = "covered"
    PARTIAL = "partial"
    MISSED = "missed"


# Every part of a bullet must be present for it to count as covered.
COVERED_RATIO = 1.0

# concept -> phrases that name it (written plainly; they go through the same stemming as text).
SYNONYMS: dict[str, list[str]] = {
    "optimizer": [
        "optimizer",
        "optimiser",
        "optim",
        "adam",
        "adamw",
        "sgd",
        "adam moments",
        "momentum buffers",
        "optimizer state",
        "optimiser state",
        "moment estimates",
    ],
    "rng": [
        "rng",
        "rng state",
        "random state",
        "random seed",
        "seed",
        "seeds",
        "generator state",
        "randomness",
        "random number generator",
    ],
    "sampler": ["sampler", "distributedsampler", "distributed sampler", "sampler state"],
    "checkpoint": ["checkpoint", "ckpt", "checkpointing", "snapshot"],
    # Another sense of the word: recomputing activations, not saving training state.
    "activationcheckpoint": [
        "activation checkpointing",
        "activation checkpoint",
        "activation checkpoints",
        "gradient checkpointing",
        "activation recomputation",
        "selective recomputation",
    ],
    "mtbf": ["mtbf", "mean time between failures", "mean time between failure"],
    "allreduce": ["allreduce", "all reduce", "all_reduce"],
    "allgather": ["allgather", "all gather", "all_gather"],
    "reducescatter": ["reducescatter", "reduce scatter", "reduce_scatter"],
    "ddp": ["ddp", "distributed data parallel", "distributeddataparallel"],
    "fsdp": [
        "fsdp",
        "fsdp2",
        "fully sharded",
        "fully_shard",
        "zero 3",
        "zero3",
        "sharded data parallel",
    ],
    "sync": [
        "sync",
        "synchronize",
        "synchronise",
        "synchronization",
        "synchronisation",
        "synchronized",
        "synchronous",
    ],
    "throughput": [
        "throughput",
        "samples per second",
        "samples per sec",
        "samples sec",
        "samples s",
        "tokens per second",
        "tokens sec",
        "tokens s",
        "tok s",
    ],
    "steprate": [
        "step rate",
        "steps per second",
        "step time",
        "it s",
        "iterations per second",
        "step completion rate",
    ],
    "scaler": ["scaler", "amp scaler", "grad scaler", "gradscaler", "loss scaler"],
    "rank0": ["rank 0", "rank zero", "rank0", "main process", "global rank 0", "leader rank"],
    "worldsize": ["world size", "world_size", "number of ranks", "num ranks"],
    "hang": ["hang", "hangs", "hung", "deadlock", "stuck"],
    "heartbeat": ["heartbeat", "watchdog", "liveness"],
    "dataloader": ["dataloader", "data loader", "loader"],
    "gradient": ["gradient", "grad", "grads"],
    "objectstore": ["object store", "s3", "gcs", "blob storage", "bucket"],
    "orchestrator": ["orchestrator", "slurm", "kubernetes", "k8s"],
    "gpu": ["gpu", "gpus", "cuda", "accelerator"],
    "nan": ["nan", "nans", "not a number"],
    "lr": ["lr", "learning rate"],
    "metric": ["metric", "metrics", "telemetry", "prometheus", "opentelemetry"],
    "configid": [
        "config identity",
        "config hash",
        "config fingerprint",
        "config digest",
        "config version",
        "run config hash",
    ],
    "barrier": ["barrier", "dist barrier", "monitored barrier"],
    "atomic": ["atomic", "atomically", "os replace", "rename"],
    "mixedprecision": ["amp", "mixed precision", "bf16", "bfloat16", "fp16"],
    "perrank": [
        "per rank",
        "each rank",
        "every rank",
        "rank tagged",
        "tagged with rank",
        "tagged with the rank",
        "tagged by rank",
        "rank tag",
        "rank label",
        "rank labelled",
        "rank labeled",
        "labelled with the rank",
        "rank aware",
    ],
    "scheduler": ["scheduler", "lr scheduler", "lr schedule", "learning rate schedule"],
    "datafetch": [
        "data fetch",
        "fetch data",
        "fetch a batch",
        "fetch the batch",
        "fetch the next batch",
        "load a batch",
        "load the next batch",
        "next batch",
        "data loading",
        "load data",
    ],
    "incompatible": [
        "incompatible",
        "not compatible",
        "mismatch",
        "mismatched",
        "does not match",
        "doesnt match",
        "do not match",
        "dont match",
        "not match",
        "differs",
    ],
    "model": ["model", "model weights", "weights", "parameters", "params", "model state"],
}

# Words that say the same thing in a rubric's context: each group's words count as its first.
RELATED: tuple[tuple[str, ...], ...] = (
    ("progress", "position", "offset", "cursor", "index"),
    ("reject", "refuse", "abort", "deny", "block"),
    ("restore", "resume", "reload", "load", "restart"),
    ("save", "write", "store", "persist", "dump"),
    ("duplicate", "repeat", "twice"),
    ("skip", "miss", "drop", "lose", "lost"),
    ("shard", "partition"),
    ("update", "step"),
    ("keep", "kept", "retain", "preserve"),
    ("avoid", "prevent"),
    ("compute", "computation", "computing"),
    ("detect", "detection", "catch"),
    ("validate", "validation", "verify", "check"),
    ("temporary", "temp", "tmp"),
    ("hash", "fingerprint", "digest", "checksum"),
)
# Generic qualifiers an answer need not repeat: "the grad scaler" states "scaler state".
_SOFT = (
    "state states explicit explicitly proper properly clear clearly actual specific whole entire "
    "full"
)

_STOPWORDS_TEXT = """
a an the and of to in on for with by per is are was be been it its that this these those as at from
into onto about so do does did use using used via eg e g ie i such also only etc vs versus than then
when what which how who whom there here their them they we you your our my me can could should would
will must may might any each every all some more most other own same just like if else while over
under up down out off after before between both either or during
"""
NEGATORS = frozenset(
    {"no", "not", "without", "never", "nor", "dont", "doesnt", "isnt", "cannot", "neither"}
)
# Concepts that imply others: an all-reduce is a synchronization point.
IMPLIES: dict[str, tuple[str, ...]] = {"@allreduce": ("@sync",), "@barrier": ("@sync",)}
# "X instead of Y", "X rather than Y": Y is not what is said
_NEGATING_PAIRS = frozenset({("instead", "of"), ("rather", "than")})
NEGATION_SCOPE = 3  # content tokens after a negator that it negates (within one clause)
# Words that end a negation's scope: "no duplicated samples after resume" still resumes.
_SCOPE_ENDS = "after before when whenever while during on at in since until because so then if"
SCOPE_ENDS = frozenset(_SCOPE_ENDS.split())

_CLAUSE = re.compile(r"[.;:!?\n]+|,|\bbut\b|\bhowever\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_ABBREVIATION = re.compile(r"\(\s*([A-Za-z][\w-]*)\s*\)")


def _undouble(word: str) -> str:
    """tagg -> tag, stopp -> stop (the doubled consonant of "tagged", "stopping")."""
    if len(word) > 2 and word[-1] == word[-2] and word[-1] in "bgmnprt":
        return word[:-1]
    return word


def stem(word: str) -> str:
    """A deliberately small suffix stripper: enough for plurals and -ing/-ed forms."""
    if len(word) > 7 and word.endswith("ness"):
        word = word[:-4]  # correctness -> correct
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return _undouble(word[:-3])
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return _undouble(word[:-2])
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 4 and word.endswith("e"):
        return word[:-1]  # duplicate/duplicating -> duplicat
    return word


STOPWORDS = frozenset(_STOPWORDS_TEXT.split()) | {stem(w) for w in _STOPWORDS_TEXT.split()}
# "X is not needed": a negator right before one of these negates what came before it instead.
_DISMISSALS = ("need", "needed", "necessary", "required", "useful", "worth", "matter", "help")
DISMISSALS = frozenset(stem(w) for w in _DISMISSALS)


def _words(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower().replace("'", ""))]


SOFT = frozenset(_words(_SOFT))
_RELATED = {stem(word): stem(group[0]) for group in RELATED for word in group}


def _build_phrases() -> dict[tuple[str, ...], str]:
    table: dict[tuple[str, ...], str] = {}
    for concept, phrases in SYNONYMS.items():
        for phrase in phrases:
            table[tuple(_words(phrase))] = "@" + concept
    return table


_PHRASES = _build_phrases()
_LONGEST = max(len(key) for key in _PHRASES)


def concepts(text: str) -> list[str]:
    """Stemmed content words with synonym phrases folded into '@concept' tokens (in order)."""
    words = _words(text)
    out: list[str] = []
    i = 0
    while i < len(words):
        for size in range(min(_LONGEST, len(words) - i), 0, -1):
            concept = _PHRASES.get(tuple(words[i : i + size]))
            if concept is not None:
                out.append(concept)
                i += size
                break
        else:
            out.append(_RELATED.get(words[i], words[i]))
            i += 1
    return out


def marked_terms(text: str, *, expand: bool = True) -> list[str]:
    """Content tokens in order, without duplicates; a token negated by a preceding "no", "not",
    "without" ... in the same clause is marked "!token", so "no replay" only matches "no replay"."""
    out: list[str] = []
    for clause in _CLAUSE.split(text):
        for token in _clause_terms(concepts(clause)):
            for term in (token, *(IMPLIES.get(token, ()) if expand else ())):
                if term not in out:
                    out.append(term)
    return out


def _clause_terms(tokens: list[str]) -> list[str]:
    """One clause's content tokens, negated ones marked "!"."""
    out: list[str] = []
    negated_left = 0
    for i, token in enumerate(tokens):
        follower = tokens[i + 1] if i + 1 < len(tokens) else ""
        if (token, follower) in _NEGATING_PAIRS:
            negated_left = NEGATION_SCOPE
            continue
        if token in NEGATORS:
            following = [t for t in tokens[i + 1 :] if t not in STOPWORDS][:1]
            if following and following[0] in DISMISSALS:
                # "activation checkpointing is not needed": the clause so far is dismissed.
                out = [t if t.startswith("!") else "!" + t for t in out]
            negated_left = NEGATION_SCOPE
            continue
        if token in SCOPE_ENDS:
            negated_left = 0
        if token in STOPWORDS:
            continue
        if negated_left:
            negated_left -= 1
            token = "!" + token
        out.append(token)
    return out


def answer_terms(answer: str) -> set[str]:
    """The concept tokens an answer asserts (negated ones marked "!")."""
    return set(marked_terms(answer))


def _content(text: str) -> list[str]:
    return marked_terms(text, expand=False)


@dataclass(frozen=True)
class BulletCoverage:
    bullet: str
    status: Coverage
    ratio: float  # fraction of the bullet's parts found
    found: tuple[str, ...]  # the bullet's parts found in the answer
    missing: tuple[str, ...]

    @property
    def covered(self) -> bool:
        return self.status is Coverage.COVERED


def bullet_parts(bullet: str) -> list[list[str]]:
    """'a b, c or d' -> [['a b'], ['c', 'd']]: parts (all needed) of alternatives (any one)."""
    parts = []
    for part in bullet.split(","):
        # "failure rate (MTBF)": a one-word parenthesis is another name for the part.
        abbreviations = _ABBREVIATION.findall(part)
        part = _ABBREVIATION.sub(" ", part)
        # "without duplicating or skipping samples": the negation covers both, one alternative
        negated = any(w in NEGATORS for w in _words(part))
        pieces = [*([part] if negated else re.split(r"\bor\b", part)), *abbreviations]
        alternatives = [a.strip() for a in pieces if _content(a)]
        if alternatives:
            parts.append(alternatives)
    return parts


def _alternative_present(alternative: str, terms: set[str]) -> bool:
    """Every content term of the alternative is in the answer (generic qualifiers aside)."""
    words = _content(alternative)
    needed = [w for w in words if w.lstrip("!") not in SOFT] or words
    return all(w in terms for w in needed)


def cover_bullet(bullet: str, terms: set[str]) -> BulletCoverage:
    parts = bullet_parts(bullet)
    if not parts:
        return BulletCoverage(bullet, Coverage.MISSED, 0.0, (), ())
    found, missing = [], []
    for alternatives in parts:
        label = " or ".join(alternatives)
        if any(_alternative_present(a, terms) for a in alternatives):
            found.append(label)
        else:
            missing.append(label)
    ratio = len(found) / len(parts)
    if ratio >= COVERED_RATIO:
        status = Coverage.COVERED
    elif ratio > 0:
        status = Coverage.PARTIAL
    else:
        # No whole part named, but some of its words are: still worth a "partial" hint.
        words = {w for alts in parts for a in alts for w in _content(a)}
        status = Coverage.PARTIAL if len(words & terms) >= 2 else Coverage.MISSED
    return BulletCoverage(bullet, status, ratio, tuple(found), tuple(missing))


def cover(answer: str, rubric: list[str]) -> list[BulletCoverage]:
    """Coverage of each rubric bullet by the answer, in rubric order."""
    terms = answer_terms(answer)
    return [cover_bullet(bullet, terms) for bullet in rubric]

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
# What a bullet is worth toward a rating that nobody confirms (the coding round's notes and
# follow-ups): a partial one counts half, though it is never ticked.
CREDIT = {"covered": 1.0, "partial": 0.5, "missed": 0.0}


def credit(statuses: list[str]) -> float:
    """The bullets' worth, by Coverage value (an unknown value is worth nothing)."""
    return sum(CREDIT.get(str(status), 0.0) for status in statuses)


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
    "checkpoint": ["checkpoint", "ckpt", "chkpt", "checkpointing", "snapshot"],
    # torch.distributed.checkpoint: every rank saves its own shard (so it implies both)
    "dcp": [
        "dcp",
        "torch distributed checkpoint",
        "distributed checkpoint",
        "distributed checkpointing",
        "dist checkpoint",
        "sharded checkpoint",
        "sharded checkpointing",
        "sharded state dict",
    ],
    "async": [
        "async",
        "asynchronous",
        "asynchronously",
        "in the background",
        "background thread",
        "non blocking",
        "nonblocking",
    ],
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
    "allreduce": ["allreduce", "all reduce", "all_reduce", "all reduces", "allreduces"],
    "allgather": ["allgather", "all gather", "all_gather"],
    "reducescatter": ["reducescatter", "reduce scatter", "reduce_scatter"],
    "ddp": ["ddp", "distributed data parallel", "distributeddataparallel"],
    "dataparallel": ["data parallel", "data parallelism", "dp"],
    "oom": ["oom", "ooms", "out of memory", "out of memory error"],
    "mfu": ["mfu", "model flops utilization", "model flop utilization", "model flops utilisation"],
    "fsdp": [
        "fsdp",
        "fsdp1",
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
    "rank0": [
        "rank 0",
        "rank zero",
        "rank0",
        "main process",
        "global rank 0",
        "leader rank",
        "first rank",
        "zeroth rank",
    ],
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
    ("id", "ids", "identifier", "identifiers"),
    ("small", "smaller", "smallest"),
    ("large", "larger", "largest", "big", "bigger"),
    ("few", "fewer", "fewest"),
    ("fail", "failure", "crash", "crashed"),
    ("accumulate", "accumulation", "accum"),
)
# Generic qualifiers an answer need not repeat: "the grad scaler" states "scaler state".
_SOFT = (
    "state states explicit explicitly proper properly clear clearly actual specific whole entire "
    "full optional optionally"
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
IMPLIES: dict[str, tuple[str, ...]] = {
    "@allreduce": ("@sync",),
    "@barrier": ("@sync",),
    "@dcp": ("@checkpoint", "shard"),
    "@ddp": ("@dataparallel",),
}
# "X instead of Y", "X rather than Y": Y is not what is said
_NEGATING_PAIRS = frozenset({("instead", "of"), ("rather", "than")})
NEGATION_SCOPE = 3  # content tokens after a negator that it negates (within one clause)
# Words that end a negation's scope: "no duplicated samples after resume" still resumes.
_SCOPE_ENDS = "after before when whenever while during on at in since until because so then if"
SCOPE_ENDS = frozenset(_SCOPE_ENDS.split())

# A dot inside a name ("torch.distributed.checkpoint", "0.0078") ends no clause.
_CLAUSE = re.compile(r"[;:!?\n]+|\.(?!\w)|,|\bbut\b|\bhowever\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
# A parenthesis after a space (a call such as "checkpoint(block, x)" is left alone): a name in it,
# "(MTBF)", "(torch.distributed.checkpoint)", is another way to state the part; anything else,
# "(stage to CPU, write in the background)", "(~16 B/param)", is a detail the part does not need.
_PARENTHESIS = re.compile(r"(?:(?<=\s)|^)\(([^()]*)\)")
_NAME = re.compile(r"[A-Za-z][\w-]*(?:\.[A-Za-z_][\w-]*)*")


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


# Derivational endings folded after stem(), longest first: "determinism", "deterministic" and
# "determine" share a root, as do "compression"/"compress", "divergence"/"diverge",
# "compatibility"/"compatible", "mergeable"/"merge". The root is only a matching key.
_DERIVATIONS = (
    ("abiliti", ""),
    ("ibiliti", ""),
    ("ability", ""),
    ("ibility", ""),
    ("istic", ""),
    ("ation", ""),
    ("ition", ""),
    ("enc", ""),  # "divergence" is "divergenc" once stemmed
    ("ency", ""),
    ("anc", ""),
    ("ism", ""),
    ("ion", ""),
    ("ity", ""),
    ("abl", ""),
    ("ibl", ""),
    ("ent", ""),
    ("ic", ""),
    ("ly", ""),
    ("at", ""),
)
MIN_ROOT = 4


def root(word: str) -> str:
    """A stemmed word with one derivational ending taken off (when at least MIN_ROOT letters
    stay), the trailing "e" and a doubled consonant too."""
    for ending, replacement in _DERIVATIONS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_ROOT:
            word = word[: len(word) - len(ending)] + replacement
            if len(word) > MIN_ROOT and word.endswith("e"):
                word = word[:-1]
            return _undouble(word)
    return word


def normal(word: str) -> str:
    """The matching key of one lower-case word: stemmed, then its derivational root."""
    return root(stem(word))


STOPWORDS = frozenset(_STOPWORDS_TEXT.split()) | {normal(w) for w in _STOPWORDS_TEXT.split()}
# "X is not needed": a negator right before one of these negates what came before it instead.
_DISMISSALS = ("need", "needed", "necessary", "required", "useful", "worth", "matter", "help")
DISMISSALS = frozenset(normal(w) for w in _DISMISSALS)
SCOPE_ENDS |= {normal(w) for w in SCOPE_ENDS}  # "during" is "dur" once stemmed


def _words(text: str) -> list[str]:
    return [normal(w) for w in _WORD.findall(text.lower().replace("'", ""))]


SOFT = frozenset(_words(_SOFT))
_RELATED = {normal(word): normal(group[0]) for group in RELATED for word in group}


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


def _top_level_parts(bullet: str) -> list[str]:
    """The bullet split at commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(bullet):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth <= 0:
            parts.append(bullet[start:i])
            start = i + 1
    return [*parts, bullet[start:]]


def bullet_parts(bullet: str) -> list[list[str]]:
    """'a b, c or d' -> [['a b'], ['c', 'd']]: parts (all needed) of alternatives (any one). A
    name in parentheses ("(MTBF)", "(torch.distributed.checkpoint)") is another way to state its
    part; other parenthesised text is a detail the part does not need (_PARENTHESIS)."""
    parts = []
    for part in _top_level_parts(bullet):
        restated = [p for p in _PARENTHESIS.findall(part) if _NAME.fullmatch(p.strip())]
        part = _PARENTHESIS.sub(" ", part)
        # "without duplicating or skipping samples": the negation covers both, one alternative
        negated = any(w in NEGATORS for w in _words(part))
        pieces = [*([part] if negated else re.split(r"\bor\b", part)), *restated]
        alternatives = [a.strip() for a in pieces if _content(a)]
        if alternatives:
            parts.append(alternatives)
    return parts


LONG_ALTERNATIVE = 4  # content terms from which one plain word may go unsaid


def _spareable(term: str) -> bool:
    """A plain word (no concept, no negation, no number) that a long alternative may lack."""
    return not term.startswith(("@", "!")) and not term[:1].isdigit()


def _alternative_present(alternative: str, terms: set[str]) -> bool:
    """Every content term of the alternative is in the answer (generic qualifiers aside); in an
    alternative of LONG_ALTERNATIVE terms or more, one plain word other than the first may be
    missing ("slowest rank sets the step time" is stated by "the step time is the slowest
    rank's"); never a concept, a negated word or a number."""
    words = _content(alternative)
    needed = [w for w in words if w.lstrip("!") not in SOFT] or words
    missing = [w for w in needed if w not in terms]
    if not missing:
        return True
    # the first term is the item's subject ("stage 1 shards ..."): never spared
    one = len(missing) == 1 and missing[0] != needed[0] and _spareable(missing[0])
    return len(needed) >= LONG_ALTERNATIVE and one


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

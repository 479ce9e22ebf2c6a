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

from drill.mock.coverage_words import (
    IMPLIES,
    NEGATING_PAIRS,
    NEGATION_SCOPE,
    NEGATORS,
    RELATED,
    SCOPE_ENDS,
    SOFT_TEXT,
    STOPWORDS_TEXT,
    SYNONYMS,
)


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


STOPWORDS = frozenset(STOPWORDS_TEXT.split()) | {normal(w) for w in STOPWORDS_TEXT.split()}
# "X is not needed": a negator right before one of these negates what came before it instead.
_DISMISSALS = ("need", "needed", "necessary", "required", "useful", "worth", "matter", "help")
DISMISSALS = frozenset(normal(w) for w in _DISMISSALS)
SCOPE_ENDS |= {normal(w) for w in SCOPE_ENDS}  # "during" is "dur" once stemmed


def _words(text: str) -> list[str]:
    return [normal(w) for w in _WORD.findall(text.lower().replace("'", ""))]


SOFT = frozenset(_words(SOFT_TEXT))
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
        if (token, follower) in NEGATING_PAIRS:
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

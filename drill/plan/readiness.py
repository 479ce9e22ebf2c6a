"""Readiness per topic for the interview date, and the five weakest items with one action each.

UI-free: `drill readiness` and the readiness screen render what this computes. The evidence is
gathered by drill.plan.readiness_sources (through the repositories, the deck set and the
coding rounds' own readers); this module only groups and weighs it:

    evidence = gather(decks, db, settings, now)          # readiness_sources
    result = build_readiness(evidence, topics_for(...))

Topics are the role table's areas (decks/roles.toml [areas]: correctness, performance,
reliability, staff-judgment), the interview's phases (the standard round's phases; a card
belongs to a phase through the tags its picks draw by, e.g. `phase-distributed`) and the deck
tags (those on at least MIN_TAG_CARDS cards; `phase-*` tags are the phases). Per topic:

- expected recall on the interview date (today without a plan): the mean over the topic's
  cards of FSRS-6's power forgetting curve from each card's stability and last review
  (drill.review.deadline.recall_on). It assumes NO further review from now: it is where the
  memory stands if the candidate stopped today, not what the plan's final pass will bring. A
  card never introduced counts 0.
- lab predictions right at each stated certainty (low, medium, high) on the topic's cards;
- exercises solved among those the topic's cards link;
- coding-round checks that held in the newest graded coding round (a check belongs to the
  topics of the cards it teaches, drill.mock.coding.report.cards_for);
- follow-up verdicts: covered, partial, missed or unanswered, from the newest verdict of each
  talk-round prompt and of the newest coding round's pushback questions.

The weakest items are ranked by weakness (0..1, WEAKNESS below) times the role's value of the
cards involved (1.0 without a plan), at most MAX_PER_KIND of each kind among the five.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drill.database import Database
    from drill.decks.loader import DeckSet
    from drill.decks.roles import RoleTable
    from drill.settings import Settings

CERTAINTIES = ("low", "medium", "high")
VERDICTS = ("covered", "partial", "missed", "unanswered")
MIN_TAG_CARDS = 5  # a tag on fewer cards is too thin to be a topic of its own
PHASE_TAG_PREFIX = "phase-"
CARD_PROMPT = "card:"  # a talk-round prompt drawn from a card (storage's prompt_key)
WEAKEST = 5
MAX_PER_KIND = 2  # among the weakest: at most this many cards, labs, ... while others wait
# how weak each piece of evidence is, before the role's value weighs it
WEAKNESS = {
    "exercise failing": 0.8,
    "exercise started": 0.6,
    "exercise not started": 0.5,
    "lab never predicted": 0.5,
    "check failed": 1.0,
    "missed": 1.0,
    "partial": 0.6,
    "unanswered": 0.4,
}
KIND_ORDER = ("check", "followup", "card", "lab", "exercise")  # ties: the first kind wins


# --- evidence (plain data, gathered by readiness_sources) ----------------------------------
@dataclass(frozen=True)
class CardFacts:
    card_id: str
    deck_id: str
    tags: tuple[str, ...]
    introduced: bool
    recall: float  # expected recall on the measured day (0.0 when never introduced)
    suspended: bool = False
    lab: str | None = None  # the lab the card links
    predicts: bool = False  # the card asks for a prediction before its lab runs
    exercise: str | None = None  # the exercise the card links


@dataclass(frozen=True)
class Prediction:
    card_id: str
    lab: str
    certainty: str
    right: bool


@dataclass(frozen=True)
class CodingCheck:
    name: str
    held: bool
    cards: tuple[str, ...]  # the cards that teach what it checks
    round_id: int
    phase_title: str  # the coding round's phase whose work it checks


@dataclass(frozen=True)
class FollowUp:
    verdict: str  # one of VERDICTS
    cards: tuple[str, ...]
    phase: str  # the standard round's phase id ("pushback" for a coding round's questions)
    prompt: str  # the talk-round prompt id ("card:ID" for a card), or the coding round's phase
    text: str  # the question, as asked (outside text: shown through printable)
    command: str = "drill mock talk"  # what starts a round with that prompt


@dataclass(frozen=True)
class Evidence:
    today: date
    measured_on: date  # the day the expected recall is for (the interview date, or today)
    cards: Sequence[CardFacts]
    predictions: Sequence[Prediction] = ()
    exercise_status: Mapping[str, str] = field(default_factory=dict)  # name -> Progress.status
    coding_checks: Sequence[CodingCheck] = ()
    followups: Sequence[FollowUp] = ()
    card_values: Mapping[str, float] = field(default_factory=dict)  # role value; default 1.0
    target_recall: float = 0.9
    interview_day: date | None = None
    role: str | None = None


@dataclass(frozen=True)
class Topic:
    name: str
    kind: str  # area | phase | tag
    tags: frozenset[str]
    title: str = ""
    cards: frozenset[str] = frozenset()  # cards named outright (a phase's `card` picks)

    def holds(self, card: CardFacts) -> bool:
        return card.card_id in self.cards or not self.tags.isdisjoint(card.tags)


# --- the result ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TopicReadiness:
    topic: str
    kind: str  # area | phase | tag
    cards: int
    introduced: int
    expected_recall: float  # mean on the date over the topic's cards, new cards 0
    predictions: Mapping[str, tuple[int, int]]  # certainty -> (right, total)
    exercises: tuple[int, int]  # (solved, linked)
    coding_checks: tuple[int, int]  # (held, total) in the newest gradings
    followups: Mapping[str, int]  # verdict -> count
    title: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "kind": self.kind,
            "title": self.title or self.topic,
            "cards": self.cards,
            "introduced": self.introduced,
            "expected_recall": round(self.expected_recall, 4),
            "predictions": {
                level: {"right": right, "total": total}
                for level, (right, total) in self.predictions.items()
            },
            "exercises": {"solved": self.exercises[0], "linked": self.exercises[1]},
            "coding_checks": {"held": self.coding_checks[0], "total": self.coding_checks[1]},
            "followups": dict(self.followups),
        }


@dataclass(frozen=True)
class WeakItem:
    what: str
    why: str
    action: str  # ONE concrete step: review card X, drill lab run Y, drill exercise ..., a round
    kind: str = ""  # card | lab | exercise | check | followup
    score: float = 0.0  # weakness x value: how the five were chosen

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "what": self.what, "why": self.why, "action": self.action,
                "score": round(self.score, 4)}  # fmt: skip


@dataclass(frozen=True)
class Readiness:
    day: date | None  # the interview date (None: no plan in force)
    role: str | None
    topics: list[TopicReadiness]
    weakest: list[WeakItem]
    today: date | None = None
    measured_on: date | None = None  # the day the expected recall is for
    target_recall: float = 0.9

    def as_json(self) -> dict[str, Any]:
        return {
            "interview_day": None if self.day is None else self.day.isoformat(),
            "role": self.role,
            "today": None if self.today is None else self.today.isoformat(),
            "recall_on": None if self.measured_on is None else self.measured_on.isoformat(),
            "target_recall": self.target_recall,
            "topics": [t.as_json() for t in self.topics],
            "weakest": [w.as_json() for w in self.weakest],
        }


# --- topics ----------------------------------------------------------------------------------
def topics_for(
    areas: Mapping[str, Iterable[str]],
    phases: Sequence[tuple[str, str, Iterable[str], Iterable[str]]],
    cards: Sequence[CardFacts],
    min_tag_cards: int = MIN_TAG_CARDS,
) -> list[Topic]:
    """The areas (name -> tags), the phases ((id, title, tags, card ids) in round order) and
    the tags on at least `min_tag_cards` cards (most cards first), `phase-*` tags left to the
    phases."""
    found = [Topic(name, "area", frozenset(tags)) for name, tags in areas.items()]
    found += [
        Topic(pid, "phase", frozenset(tags), title=title, cards=frozenset(ids))
        for pid, title, tags, ids in phases
    ]
    counts: dict[str, int] = {}
    for card in cards:
        for tag in card.tags:
            counts[tag] = counts.get(tag, 0) + 1
    tags = [
        t for t, n in counts.items() if n >= min_tag_cards and not t.startswith(PHASE_TAG_PREFIX)
    ]
    tags.sort(key=lambda t: (-counts[t], t))
    return found + [Topic(tag, "tag", frozenset((tag,))) for tag in tags]


def readiness(
    decks: DeckSet,
    db: Database,
    settings: Settings,
    now: datetime,
    *,
    roles: RoleTable | None = None,
    rounds_dir: Path | None = None,
    deck_dirs: Iterable[Path] = (),
) -> Readiness:
    """Readiness per topic and the weakest items, from the decks, the database (schedule, plan,
    run log, exercise progress, talk rounds) and the coding rounds under `rounds_dir`
    (DRILL_HOME/rounds by default)."""
    from drill.plan.readiness_sources import gather

    evidence, topics = gather(
        decks, db, settings, now, roles=roles, rounds_dir=rounds_dir, deck_dirs=deck_dirs
    )
    return build_readiness(evidence, topics)


# --- per topic ---------------------------------------------------------------------------------
def build_readiness(evidence: Evidence, topics: Sequence[Topic]) -> Readiness:
    return Readiness(
        day=evidence.interview_day,
        role=evidence.role,
        topics=[topic_readiness(evidence, topic) for topic in topics],
        weakest=weakest_items(evidence),
        today=evidence.today,
        measured_on=evidence.measured_on,
        target_recall=evidence.target_recall,
    )


def topic_readiness(evidence: Evidence, topic: Topic) -> TopicReadiness:
    members = [card for card in evidence.cards if topic.holds(card)]
    ids = {card.card_id for card in members}
    predictions = {level: [0, 0] for level in CERTAINTIES}
    for p in evidence.predictions:
        if p.card_id in ids and p.certainty in predictions:
            predictions[p.certainty][0] += int(p.right)
            predictions[p.certainty][1] += 1
    linked = {card.exercise for card in members if card.exercise}
    solved = sum(1 for name in linked if evidence.exercise_status.get(name) == "solved")
    checks = [c for c in evidence.coding_checks if ids.intersection(c.cards)]
    verdicts = dict.fromkeys(VERDICTS, 0)
    for f in evidence.followups:
        if ids.intersection(f.cards) or (topic.kind == "phase" and f.phase == topic.name):
            verdicts[f.verdict] = verdicts.get(f.verdict, 0) + 1
    recall = sum(card.recall for card in members) / len(members) if members else 0.0
    return TopicReadiness(
        topic=topic.name,
        kind=topic.kind,
        cards=len(members),
        introduced=sum(1 for card in members if card.introduced),
        expected_recall=recall,
        predictions={level: (r, n) for level, (r, n) in predictions.items()},
        exercises=(solved, len(linked)),
        coding_checks=(sum(1 for c in checks if c.held), len(checks)),
        followups=verdicts,
        title=topic.title,
    )


# --- the weakest items -----------------------------------------------------------------------
def weakest_items(evidence: Evidence, count: int = WEAKEST) -> list[WeakItem]:
    """The `count` weakest items, each with one action, by weakness x value (at most
    MAX_PER_KIND of a kind while other kinds have candidates)."""
    found = [
        *_weak_cards(evidence),
        *_weak_labs(evidence),
        *_weak_exercises(evidence),
        *_weak_checks(evidence),
        *_weak_followups(evidence),
    ]
    found.sort(key=lambda item: (-item.score, KIND_ORDER.index(item.kind), item.what))
    chosen: list[WeakItem] = []
    per_kind: dict[str, int] = {}
    for item in found:
        if len(chosen) < count and per_kind.get(item.kind, 0) < MAX_PER_KIND:
            chosen.append(item)
            per_kind[item.kind] = per_kind.get(item.kind, 0) + 1
    for item in found:  # too few kinds to fill the list: the strongest of the rest
        if len(chosen) < count and item not in chosen:
            chosen.append(item)
    chosen.sort(key=lambda item: (-item.score, KIND_ORDER.index(item.kind), item.what))
    return chosen


def _value(evidence: Evidence, card_ids: Iterable[str]) -> float:
    return max((evidence.card_values.get(c, 1.0) for c in card_ids), default=1.0)


def _on(evidence: Evidence) -> str:
    return "today" if evidence.measured_on == evidence.today else f"on {evidence.measured_on}"


def _weak_cards(evidence: Evidence) -> list[WeakItem]:
    """Introduced cards expected below the target (a new card is the plan's pacing to
    introduce, not a weakness yet)."""
    return [
        WeakItem(
            what=f"card {card.card_id}",
            why=f"expected recall {card.recall:.0%} {_on(evidence)} "
            f"(target {evidence.target_recall:.0%})",
            action=f"review card {card.card_id}",
            kind="card",
            score=(1 - card.recall) * _value(evidence, (card.card_id,)),
        )
        for card in evidence.cards
        if card.introduced and not card.suspended and card.recall < evidence.target_recall
    ]


def _weak_labs(evidence: Evidence) -> list[WeakItem]:
    """Per lab behind cards that ask for a prediction: the share of wrong predictions, or
    WEAKNESS["lab never predicted"] when none was made."""
    cards_of: dict[str, list[str]] = {}
    for card in evidence.cards:
        if card.lab and card.predicts:
            cards_of.setdefault(card.lab, []).append(card.card_id)
    made: dict[str, list[bool]] = {}
    for p in evidence.predictions:
        made.setdefault(p.lab, []).append(p.right)
    items = []
    for lab, card_ids in cards_of.items():
        results = made.get(lab, [])
        if results:
            wrong = results.count(False)
            if not wrong:
                continue
            weakness, why = wrong / len(results), f"{wrong} of {len(results)} predictions wrong"
        else:
            weakness, why = WEAKNESS["lab never predicted"], "never predicted"
        items.append(WeakItem(f"lab {lab}", why, f"drill lab run {lab} (predict first)", "lab",
                              weakness * _value(evidence, card_ids)))  # fmt: skip
    return items


def _weak_exercises(evidence: Evidence) -> list[WeakItem]:
    cards_of: dict[str, list[str]] = {}
    for card in evidence.cards:
        if card.exercise:
            cards_of.setdefault(card.exercise, []).append(card.card_id)
    items = []
    for name, card_ids in cards_of.items():
        status = evidence.exercise_status.get(name, "not started")
        if status == "solved":
            continue
        weakness = WEAKNESS.get(f"exercise {status}", WEAKNESS["exercise not started"])
        command = "start" if status == "not started" else "check"
        items.append(WeakItem(f"exercise {name}", status, f"drill exercise {command} {name}",
                              "exercise", weakness * _value(evidence, card_ids)))  # fmt: skip
    return items


def _weak_checks(evidence: Evidence) -> list[WeakItem]:
    return [
        WeakItem(
            what=f"coding check {check.name}",
            why=f"failed in the newest grading of coding round {check.round_id}",
            action=f"a round on prompt {check.phase_title!r} (drill mock)",
            kind="check",
            score=WEAKNESS["check failed"] * _value(evidence, check.cards),
        )
        for check in evidence.coding_checks
        if not check.held
    ]


def _weak_followups(evidence: Evidence) -> list[WeakItem]:
    items = []
    for f in evidence.followups:
        if f.verdict == "covered":
            continue
        card = f.prompt.removeprefix(CARD_PROMPT) if f.prompt.startswith(CARD_PROMPT) else None
        round_on = f"a round on prompt {f.prompt} ({f.command})"
        items.append(
            WeakItem(
                what=f"follow-up {_clip(f.text)!r}",
                why=f"{f.verdict} (phase {f.phase})",
                action=f"review card {card}" if card else round_on,
                kind="followup",
                score=WEAKNESS[f.verdict] * _value(evidence, f.cards),
            )
        )
    return items


def _clip(text: str, limit: int = 48) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- a picture -------------------------------------------------------------------------------
def meter(fraction: float, width: int) -> str:
    """A bar of `width` cells filled to `fraction` (0..1) in eighths: what the CLI and the
    screen draw expected recall with."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[part] if part else ""
    return ("█" * full + partial).ljust(width, "·")[:width]


def predictions_total(predictions: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
    """(right, total) over every certainty."""
    return sum(r for r, _ in predictions.values()), sum(n for _, n in predictions.values())


def _ratio(done: int, total: int) -> str:
    return f"{done}/{total}" if total else "-"


def topic_cells(t: TopicReadiness) -> dict[str, str]:
    """One topic's figures as short text, by column: what the CLI table and the screen show
    (the JSON has them as numbers)."""
    levels = " ".join(f"{level[0].upper()}{_ratio(*t.predictions.get(level, (0, 0)))}"
                      for level in CERTAINTIES)  # fmt: skip
    answered = sum(n for verdict, n in t.followups.items() if verdict != "unanswered")
    return {
        "recall": f"{t.expected_recall:4.0%}",
        "introduced": f"{t.introduced}/{t.cards}",
        "predictions": levels,
        "exercises": _ratio(*t.exercises),
        "checks": _ratio(*t.coding_checks),
        "followups": _ratio(t.followups.get("covered", 0), answered),
    }


KIND_TITLES = {"area": "Areas", "phase": "Interview phases", "tag": "Deck tags"}
COLUMN_HELP = (
    "recall: expected recall on the date (no further review assumed; new cards count 0) · "
    "cards: introduced/all · labs: predictions right at Low/Medium/High certainty · "
    "ex: exercises solved/linked · checks: coding-round checks held/run (newest grading) · "
    "f-ups: follow-ups covered/answered"
)

"""The evidence readiness weighs (drill.plan.readiness), gathered where it is kept:

- the schedule (storage.snapshot.read_snapshot: each card's stability and last review) and the
  interview plan in force (db.plans);
- lab predictions: the run log (db.runs, kind "lab": predicted, certainty, prediction_right);
- exercise progress (drill.exercises.progress.ProgressStore);
- the newest graded coding round: its report (drill.mock.coding.report.build_report: the
  latest verdict of each check, the pushback questions' verdicts), found through
  drill.mock.coding.past.coding_history;
- talk rounds: their stored reports (drill.mock.store.MockStore), the newest verdict of each
  prompt by the rule that feeds ratings back (drill.mock.rubric_bands.feedback_rating);
- the interview's phases: the standard round (drill.mock.loader).

Nothing here reads a check's or a run's human detail text: verdicts come from typed fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from drill.mock.rubric_bands import HARD
from drill.plan.readiness import (
    CardFacts,
    CodingCheck,
    Evidence,
    FollowUp,
    Prediction,
    Topic,
    topics_for,
)
from drill.times import learner_date

if TYPE_CHECKING:
    from drill.database import Database
    from drill.decks.loader import DeckSet
    from drill.decks.roles import RoleTable
    from drill.mock.models import RoundDef
    from drill.settings import Settings
    from storage.snapshot import ScheduleRow

STANDARD_ROUND = "standard"
MAX_LAB_RUNS = 10_000  # the run log rows read for predictions (newest first)
TALK_ROUNDS = 20  # the newest talk rounds whose prompts' verdicts count


def gather(
    decks: DeckSet,
    db: Database,
    settings: Settings,
    now: datetime,
    *,
    roles: RoleTable | None = None,
    rounds_dir: Path | None = None,
    deck_dirs: Iterable[Path] = (),
) -> tuple[Evidence, list[Topic]]:
    """Everything readiness weighs, and its topics. Raises storage's DatabaseError for a
    database that cannot be read; a round file or coding round that cannot be read is left
    out."""
    from drill.decks.roles import load_roles
    from drill.mock.coding.session import default_rounds_dir
    from storage.snapshot import read_snapshot

    roles = roles or load_roles()
    plan = db.plans.current()
    role = roles.roles.get(plan.role) if plan is not None else None
    today = learner_date(now, settings.day_start_hour)
    measured_on = plan.interview_day if plan is not None and plan.interview_day > today else today
    snapshot = read_snapshot(db.path, strict=True)
    schedules = snapshot.schedules if snapshot is not None else {}
    cards = card_facts(decks, schedules, measured_on, settings)
    coding_checks, coding_followups = newest_coding_round(rounds_dir or default_rounds_dir())
    evidence = Evidence(
        today=today,
        measured_on=measured_on,
        cards=cards,
        predictions=lab_predictions(db),
        exercise_status=exercise_status(db),
        coding_checks=coding_checks,
        followups=[*talk_followups(db), *coding_followups],
        card_values={c.card_id: role.card_value(c.deck_id, c.tags) for c in cards} if role else {},
        target_recall=plan.target_recall if plan is not None else settings.desired_retention,
        interview_day=plan.interview_day if plan is not None else None,
        role=plan.role if plan is not None else None,
    )
    return evidence, topics_for(roles.areas, round_phases(deck_dirs), cards)


def card_facts(
    decks: DeckSet,
    schedules: dict[str, ScheduleRow],
    day: object,
    settings: Settings,
) -> list[CardFacts]:
    """Every card of the decks with its expected recall on `day` (no further review
    assumed; a card never introduced: 0.0)."""
    from drill.review.deadline import decay_of, recall_on

    decay = decay_of(settings)
    facts = []
    for loaded in decks.decks:
        for card in loaded.deck.cards:
            row = schedules.get(card.id)
            introduced = row is not None and row.state is not None and row.damaged is None
            recall = 0.0
            if introduced and row.stability and row.last_review is not None:  # type: ignore[union-attr]
                last = learner_date(row.last_review, settings.day_start_hour)  # type: ignore[union-attr]
                recall = recall_on(row.stability, last, day, decay)  # type: ignore[union-attr,arg-type]
            facts.append(
                CardFacts(
                    card_id=card.id,
                    deck_id=loaded.deck.deck,
                    tags=tuple(card.tags),
                    introduced=introduced,
                    recall=recall,
                    suspended=row is not None and row.suspended,
                    lab=card.lab.run if card.lab is not None else None,
                    predicts=card.predict is not None,
                    exercise=card.exercise,
                )
            )
    return facts


def lab_predictions(db: Database) -> list[Prediction]:
    """Every judged prediction of a lab run from a card (the run log)."""
    return [
        Prediction(e.card_id, e.name, e.certainty, bool(e.prediction_right))
        for e in db.runs.find(kinds=("lab",), limit=MAX_LAB_RUNS)
        if e.card_id and e.certainty and e.prediction_right is not None
    ]


def exercise_status(db: Database) -> dict[str, str]:
    from drill.exercises.progress import ProgressStore

    return {name: progress.status for name, progress in ProgressStore(db).all().items()}


def newest_coding_round(rounds_dir: Path) -> tuple[list[CodingCheck], list[FollowUp]]:
    """The checks (latest verdict of each) and pushback verdicts of the newest coding round
    that was graded; none without one."""
    from drill.mock.coding.past import coding_history
    from drill.mock.coding.report import build_report, cards_for
    from drill.mock.coding.session import CodingSession

    graded = next((row for row in coding_history(rounds_dir) if row.total), None)
    if graded is None:
        return [], []
    try:
        report = build_report(CodingSession(rounds_dir / str(graded.id)))
    except (OSError, ValueError):  # a folder changed or damaged since it was listed
        return [], []
    checks = [
        CodingCheck(str(c["name"]), bool(c["passed"]), cards_for(str(c["name"])), graded.id, title)
        for title, phase_checks in ((p.title, p.checks) for p in report.phases)
        for c in phase_checks
    ]
    pushback = next((p.title for p in report.phases if p.phase_id == "pushback"), "pushback")
    followups = [
        FollowUp(
            verdict=_verdict(q.answered, q.rating()),
            cards=q.cards,
            phase="pushback",
            prompt=repr(pushback),
            text=q.question,
            command="drill mock",
        )
        for q in report.followups
    ]
    return checks, followups


def talk_followups(db: Database) -> list[FollowUp]:
    """The newest verdict of each prompt over the newest TALK_ROUNDS graded talk rounds."""
    from drill.mock.errors import MockError
    from drill.mock.rubric_bands import feedback_rating
    from drill.mock.store import MockStore

    store = MockStore(db)
    seen: set[str] = set()
    found = []
    for row in store.history(TALK_ROUNDS):
        if row.band is None:  # not graded (yet)
            continue
        try:
            report = store.report(row.id)
        except (MockError, ValueError):  # gone, or a stored report this version cannot read
            continue
        for phase in report.phases:
            for prompt in phase.prompts:
                if prompt.key in seen:
                    continue
                seen.add(prompt.key)
                rating = feedback_rating([b.checked for b in prompt.bullets])
                found.append(
                    FollowUp(
                        verdict=_verdict(bool(prompt.answer.strip()), rating),
                        cards=(prompt.card_id,) if prompt.card_id else (),
                        phase=phase.id,
                        prompt=prompt.key,
                        text=prompt.text,
                    )
                )
    return found


def _verdict(answered: bool, rating: int | None) -> str:
    if not answered:
        return "unanswered"
    return {None: "covered", HARD: "partial"}.get(rating, "missed")


def round_phases(
    deck_dirs: Iterable[Path] = (),
) -> list[tuple[str, str, list[str], list[str]]]:
    """The standard round's phases: (id, title, the tags its picks draw by, the cards they
    name), in round order; the bundled round where a user's file cannot be read."""
    definition = _standard_round(list(deck_dirs))
    if definition is None:
        return []
    return [
        (
            phase.id,
            phase.title,
            [tag for pick in phase.picks for tag in pick.tags],
            [pick.card for pick in phase.picks if pick.card],
        )
        for phase in definition.phases
    ]


def _standard_round(deck_dirs: list[Path]) -> RoundDef | None:
    from drill.mock.errors import MockError
    from drill.mock.loader import find_round

    for dirs in (deck_dirs, []):
        try:
            return find_round(STANDARD_ROUND, dirs)
        except MockError:
            continue
    return None

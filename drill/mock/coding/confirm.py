"""The coding round's checklist before feedback to review (drill.mock.checklist holds the rule):
each check that ran and failed is an item the grader left unticked, each answered follow-up's
rubric items carry the matcher's ticks (drill.mock.coverage). Nothing is rated until the person
confirms; `settle` then writes the marker (feedback.json) that makes it once per round.

    checklist = coding_checklist(session, build_report(session), rate, deck_of)
    if checklist is not None:                    # None: already settled, or nothing examined
        lines = settle(session, checklist.confirm())   # or checklist.do_not_rate()
"""

from __future__ import annotations

import json
from collections.abc import Callable

from drill.mock.checklist import (
    NOT_RATED,
    ChecklistEntry,
    ChecklistItem,
    ChecklistOutcome,
    RateCard,
    RatingChecklist,
)
from drill.mock.coding.check_facts import was_run
from drill.mock.coding.report import FEEDBACK_FILE, CodingReport, cards_for
from drill.mock.coding.session import CodingSession
from drill.mock.coverage import Coverage


def _with_decks(
    cards: tuple[str, ...], deck_of: Callable[[str], str]
) -> tuple[tuple[str, str], ...]:
    found = []
    for card_id in cards:
        try:
            found.append((card_id, deck_of(card_id)))
        except KeyError:  # a card no longer in the decks: nothing to rate
            continue
    return tuple(found)


def coding_entries(report: CodingReport, deck_of: Callable[[str], str]) -> list[ChecklistEntry]:
    """The failed checks that ran (one unticked item each), then the follow-ups with the
    matcher's ticks (a partly named item is proposed unticked, and says so)."""
    entries = []
    for check in report.checks:
        if check["passed"] or not was_run(check):
            continue
        cards = _with_decks(cards_for(check["name"]), deck_of)
        if cards:
            detail = str(check.get("detail") or "")
            item = ChecklistItem(f"{check['name']} held", proposed=False)
            entries.append(ChecklistEntry(f"Check failed: {detail}", [item], cards,
                                          why="a failed check"))  # fmt: skip
    for question in report.followups:
        items = [
            ChecklistItem(
                bullet + (" (partly named)" if status == Coverage.PARTIAL else ""),
                proposed=status == Coverage.COVERED,
            )
            for bullet, status in question.bullets
        ]
        cards = _with_decks(question.cards, deck_of)
        title = f"Follow-up Q{question.number}: {question.question}"
        entries.append(ChecklistEntry(title, items, cards, question.answered, "a follow-up"))
    return entries


def coding_checklist(
    session: CodingSession,
    report: CodingReport,
    rate: RateCard | None,
    deck_of: Callable[[str], str],
) -> RatingChecklist | None:
    """The round's checklist to confirm; None once settled (confirmed or declined) or while
    nothing was examined yet (a later grading may still call for one)."""
    if (session.folder / FEEDBACK_FILE).exists():
        return None
    if not report.grades and not any(q.answered for q in report.followups):
        return None
    return RatingChecklist(coding_entries(report, deck_of), rate)


def settle(session: CodingSession, outcome: ChecklistOutcome) -> list[str]:
    """Keep what the confirmed (or declined) checklist did in feedback.json, for the report;
    one line per card."""
    lines = outcome.lines()
    marker = {
        "rated": outcome.changed,
        "not_seen": [c.card_id for c in outcome.cards if not c.change.changed],
        "changes": lines if outcome.status == NOT_RATED else [c.line() for c in outcome.cards],
        "status": outcome.status,
    }
    (session.folder / FEEDBACK_FILE).write_text(json.dumps(marker))
    return lines

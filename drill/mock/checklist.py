"""The checklist a person confirms before any card is rated after a round (UI-free).

The matcher (drill.mock.coverage) and the grader propose a tick per rubric item; the person
flips items and confirms, or chooses not to rate. Only `confirm()` rates, once, and only then:
the service holds the ticks until that moment. The rule that turns ticks into a rating is the
text round's (drill.mock.rubric_bands.feedback_rating): every item ticked rates nothing, at
least half Hard, fewer Again. A card several entries link gets the lowest of their ratings.

    checklist = RatingChecklist(entries, rate)   # rate(card_id, deck_id, rating) -> CardChange
    checklist.flip(0, 2)                         # entry 0, item 2: the person disagrees
    checklist.flip_labelled("1.3")               # the same item as plain_lines numbers it
    outcome = checklist.confirm()                # or checklist.do_not_rate()
    outcome.lines()                              # "card: Again, due in 10 min (was due ...)"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from drill.mock.errors import MockError
from drill.mock.rubric_bands import feedback_rating
from drill.review.ratings import RATING_NAMES

if TYPE_CHECKING:
    from drill.review.outside import CardChange

OPEN, CONFIRMED, NOT_RATED = "open", "confirmed", "not rated"

# rate(card_id, deck_id, rating): feeds a weak card back into review, returns what it did to it
RateCard = Callable[[str, str, int], "CardChange"]


@dataclass
class ChecklistItem:
    """One rubric item: what the matcher (or the grader) proposed, and the tick as it stands."""

    text: str
    proposed: bool
    ticked: bool | None = None  # None until set: the proposal

    def __post_init__(self) -> None:
        if self.ticked is None:
            self.ticked = self.proposed

    @property
    def flipped(self) -> bool:
        return self.ticked != self.proposed


@dataclass
class ChecklistEntry:
    """A question of the round (a prompt, a follow-up, a check) with its rubric items and the
    review cards it rates. `answered`: an entry nobody answered examined nothing, rates nothing."""

    title: str
    items: list[ChecklistItem]
    cards: tuple[tuple[str, str], ...]  # (card id, deck id)
    answered: bool = True
    why: str = ""  # "a follow-up", "a failed check": said in the report

    def rating(self) -> int | None:
        if not self.answered or not self.cards:
            return None
        return feedback_rating([bool(item.ticked) for item in self.items])


@dataclass(frozen=True)
class CardOutcome:
    """What confirming did to one card: the rating and its due date before and after."""

    card_id: str
    rating: int
    why: str
    change: CardChange

    @property
    def due_before(self) -> datetime | None:
        rated = self.change.rated
        return None if rated is None or rated.before is None else rated.before.get("due")

    @property
    def due_after(self) -> datetime | None:
        return self.change.due

    def line(self) -> str:
        """'card: Again, due in 10 min (was due 2026-03-20 09:00 UTC, now 2026-03-10 12:10
        UTC) (a follow-up)'; a new or not-due card says so (CardChange.describe)."""
        text = self.change.describe()
        before, after = self.due_before, self.due_after
        if self.change.changed and before is not None and after is not None:
            text += f" (was due {_moment(before)}, now {_moment(after)})"
        return f"{text} ({self.why})" if self.why else text


def _moment(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass
class ChecklistOutcome:
    status: str  # CONFIRMED | NOT_RATED
    cards: list[CardOutcome] = field(default_factory=list)

    def lines(self) -> list[str]:
        if self.status == NOT_RATED:
            return ["not rated: you chose not to rate this round"]
        return [card.line() for card in self.cards] or ["no card needed a rating"]

    @property
    def changed(self) -> list[str]:
        """Ids of the cards whose review was written."""
        return [card.card_id for card in self.cards if card.change.changed]


class RatingChecklist:
    """The proposed ticks of a finished round, held until the person confirms or declines."""

    def __init__(self, entries: list[ChecklistEntry], rate: RateCard | None) -> None:
        self.entries = entries
        self.rate = rate
        self.status = OPEN
        self.outcome: ChecklistOutcome | None = None

    def flip(self, entry: int, item: int) -> bool:
        """Flip one item's tick; its new value."""
        self._still_open()
        target = self.entries[entry].items[item]
        target.ticked = not target.ticked
        return bool(target.ticked)

    def flip_labelled(self, label: str) -> bool:
        """Flip the item `plain_lines` labels "N.M" (entry N, item M, both from 1); its new
        value. A label that names no item is a one-line MockError."""
        entry, dot, item = label.strip().partition(".")
        if not (dot and entry.isdigit() and item.isdigit()):
            raise MockError(f"{label!r} is not an item: give N.M as the checklist numbers it")
        e, i = int(entry) - 1, int(item) - 1
        if not (0 <= e < len(self.entries) and 0 <= i < len(self.entries[e].items)):
            raise MockError(f"the checklist has no item {int(entry)}.{int(item)}")
        return self.flip(e, i)

    def proposed_ratings(self) -> dict[str, tuple[int, str]]:
        """Card id -> (rating, why) as the ticks stand now; the lowest rating wins, the reasons
        add up ("a failed check and a follow-up")."""
        found: dict[str, tuple[int, str]] = {}
        for entry in self.entries:
            rating = entry.rating()
            if rating is None:
                continue
            for card_id, _deck in entry.cards:
                old_rating, old_why = found.get(card_id, (rating, ""))
                whys = [w for w in (old_why, entry.why) if w]
                why = " and ".join(dict.fromkeys(whys))
                found[card_id] = (min(rating, old_rating), why)
        return found

    def confirm(self) -> ChecklistOutcome:
        """Rate every card the ticks call for, now and once."""
        self._still_open()
        decks = {card: deck for entry in self.entries for card, deck in entry.cards}
        cards = []
        if self.rate is not None:
            for card_id, (rating, why) in self.proposed_ratings().items():
                change = self.rate(card_id, decks[card_id], rating)
                cards.append(CardOutcome(card_id, rating, why, change))
        self.status = CONFIRMED
        self.outcome = ChecklistOutcome(CONFIRMED, cards)
        return self.outcome

    def do_not_rate(self) -> ChecklistOutcome:
        """Close the checklist without rating any card."""
        self._still_open()
        self.status = NOT_RATED
        self.outcome = ChecklistOutcome(NOT_RATED)
        return self.outcome

    def plain_lines(self) -> list[str]:
        """The checklist as text, for the CLI: '[x] N.M item' per item (the label
        `flip_labelled` takes; "(flipped)" where the person changed the proposal), then the
        ratings it gives."""
        lines = []
        for number, entry in enumerate(self.entries, 1):
            lines.append(f"{number}. {entry.title}")
            if not entry.answered:
                lines.append("   (not answered: rates nothing)")
            for index, item in enumerate(entry.items, 1):
                flipped = " (flipped)" if item.flipped else ""
                tick = "x" if item.ticked else " "
                lines.append(f"   [{tick}] {number}.{index} {item.text}{flipped}")
        ratings = self.proposed_ratings()
        lines.append("Ratings on confirm:" if ratings else "Ratings on confirm: none")
        for card, (rating, why) in ratings.items():
            lines.append(f"  {card}: {RATING_NAMES.get(rating, rating)} ({why})")
        return lines

    def _still_open(self) -> None:
        if self.status != OPEN:
            raise MockError(f"the checklist is already {self.status}")

"""The card browser's service: rows, the query language, search, and the row actions.

UI-free. Query syntax (case-insensitive, every term must match):

    tag:fsdp  level:hard  deck:biotech  is:suspended|due|new|leech|buried|learning|young|mature
    free words (each must appear in front, back, tags, deck, level or state)
    "a quoted phrase"  tag:"two words"
    -tag:fsdp  -is:suspended  -deck:biotech  -word  -"a phrase"   (a leading - negates, as in Anki)

A bad term (an unknown `key:`, an unknown `is:`/`level:` value, an unclosed quote) is skipped
and named in `Query.hint`, one line; the rest of the query still applies. `is:leech` is the
card_state.leech flag (schema v4, set by the scheduler when a card lapses too often); a leech
also counts as tagged `leech` (`tag:leech`, the free word leech), as Anki tags its leeches.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from drill.decks.numbers import drawn_anew_line, fixed_instance, shown_text
from drill.files import read_regular
from drill.review.queue import due_at, next_day_start
from drill.review.stats import state_name
from drill.settings import Settings
from storage import stats_queries as q

DEFAULT_DAY_START_HOUR = Settings().day_start_hour
LEVELS = ("easy", "medium", "hard")
IS_VALUES = ("suspended", "due", "new", "leech", "buried", "learning", "young", "mature")
KEYS = ("tag", "level", "deck", "is")
_TOKEN = re.compile(r'(-)?(?:(\w+):)?(?:"([^"]*)"|(\S+))')


@dataclass
class CardRow:
    """One browser row: the card's text from the decks and its schedule from the database."""

    card_id: str
    deck_id: str
    deck_title: str
    level: str
    tags: tuple[str, ...]
    front: str
    back: str
    has_lab: bool = False
    numbers_note: str = ""  # a numbers card: front and back show one fixed drawing; this says so
    path: Path | None = None
    line: int = 1
    state: str = "new"  # new | learning | young | mature
    fsrs_state: int | None = None  # as stored: 1 learning, 2 review, 3 relearning; None new
    due: datetime | None = None
    suspended: bool = False
    buried_until: datetime | None = None
    lapses: int = 0
    leech: bool = False
    text: str = field(default="", repr=False)  # lowercased haystack for free words
    tag_set: frozenset[str] = field(default=frozenset(), repr=False)  # lowercased, with leech
    deck_text: str = field(default="", repr=False)  # lowercased deck id and title

    def __post_init__(self) -> None:
        self.refresh_text()

    def refresh_text(self) -> None:
        """Recompute what search reads (after the row's state or flags changed)."""
        self.text = " ".join(
            (self.front, self.back, " ".join(self.tags), self.deck_id, self.deck_title,
             self.level, self.state, self.card_id, "leech" if self.leech else "")
        ).lower()  # fmt: skip
        self.tag_set = frozenset(t.lower() for t in self.tags) | (
            {"leech"} if self.leech else frozenset()
        )
        self.deck_text = f"{self.deck_id}\x00{self.deck_title}".lower()

    def is_buried(self, now: datetime) -> bool:
        return self.buried_until is not None and self.buried_until > now

    def is_due(self, now: datetime, day_end: datetime | None = None) -> bool:
        """Due as the review queue has it (queue.due_at): a review card for its whole learner
        day, which ends at `day_end`; the others at their time."""
        return (
            self.state != "new"
            and not self.suspended
            and not self.is_buried(now)
            and due_at(self.fsrs_state, self.due, now, day_end)
        )

    def flags(self, now: datetime) -> str:
        marks = []
        if self.suspended:
            marks.append("suspended")
        if self.is_buried(now):
            marks.append("buried")
        if self.leech:
            marks.append("leech")
        return " ".join(marks)


@dataclass(frozen=True)
class Terms:
    """What one side of a query names: the terms that must match, or those that must not."""

    words: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    decks: tuple[str, ...] = ()
    is_: tuple[str, ...] = ()


@dataclass(frozen=True)
class Query(Terms):
    negated: Terms = Terms()  # `-term`: each of these must not match
    hint: str | None = None  # one line naming what was skipped


def parse_query(text: str) -> Query:
    found: dict[bool, dict[str, list[str]]] = {
        negated: {key: [] for key in (*KEYS, "word")} for negated in (False, True)
    }
    problems: list[str] = []
    if text.count('"') % 2:
        problems.append('unclosed quote "')
        text = text.replace('"', " ")
    for match in _TOKEN.finditer(text):
        minus, key, quoted, bare = match.groups()
        value = (quoted if quoted is not None else bare or "").lower()
        sign = "-" if minus else ""
        terms = found[bool(minus)]
        if key is None and value == "-":  # a negation still being typed: no term yet
            continue
        if key is None:
            if value[:-1] in KEYS and value.endswith(":"):
                problems.append(f"{sign}{value} needs a value")
            elif value:
                terms["word"].append(value)
            continue
        key = key.lower()
        if key not in KEYS:
            problems.append(f"unknown filter {key}: (use {', '.join(k + ':' for k in KEYS)})")
        elif not value:
            problems.append(f"{sign}{key}: needs a value")
        elif key == "level" and value not in LEVELS:
            problems.append(f"{sign}level:{value}? (use {'|'.join(LEVELS)})")
        elif key == "is" and value not in IS_VALUES:
            problems.append(f"{sign}is:{value}? (use {'|'.join(IS_VALUES)})")
        else:
            terms[key].append(value)
    must, must_not = (_terms(found[negated]) for negated in (False, True))
    return Query(
        words=must.words,
        tags=must.tags,
        levels=must.levels,
        decks=must.decks,
        is_=must.is_,
        negated=must_not,
        hint="; ".join(problems) if problems else None,
    )


def _terms(found: dict[str, list[str]]) -> Terms:
    return Terms(
        words=tuple(found["word"]),
        tags=tuple(found["tag"]),
        levels=tuple(found["level"]),
        decks=tuple(found["deck"]),
        is_=tuple(found["is"]),
    )


def _matches_is(row: CardRow, what: str, now: datetime, day_end: datetime) -> bool:
    if what == "suspended":
        return row.suspended
    if what == "due":
        return row.is_due(now, day_end)
    if what == "buried":
        return row.is_buried(now)
    if what == "leech":
        return row.leech
    return row.state == what  # new | learning | young | mature


def matches(row: CardRow, query: Query, now: datetime, day_end: datetime | None = None) -> bool:
    """Whether `row` matches `query` at `now`; `day_end` (when the learner's next day starts,
    default: at the default day start hour) bounds `is:due` for review cards."""
    if day_end is None:
        day_end = next_day_start(now, DEFAULT_DAY_START_HOUR)
    if query.levels and row.level not in query.levels:
        return False
    if query.tags and not row.tag_set.issuperset(query.tags):
        return False
    if any(d not in row.deck_text for d in query.decks):  # id or title contains it
        return False
    if any(not _matches_is(row, what, now, day_end) for what in query.is_):
        return False
    if not all(word in row.text for word in query.words):
        return False
    return not _any_term(row, query.negated, now, day_end)


def _any_term(row: CardRow, terms: Terms, now: datetime, day_end: datetime) -> bool:
    """Whether the row matches at least one of `terms` (each taken alone)."""
    return (
        row.level in terms.levels
        or any(tag in row.tag_set for tag in terms.tags)
        or any(d in row.deck_text for d in terms.decks)
        or any(_matches_is(row, what, now, day_end) for what in terms.is_)
        or any(word in row.text for word in terms.words)
    )


def search(
    rows: Sequence[CardRow],
    text: str,
    now: datetime,
    *,
    day_start_hour: int | None = None,
) -> tuple[list[CardRow], Query]:
    """Rows matching `text` in their order, and the parsed query (for its hint). The learner's
    day starts at `day_start_hour` (Settings.day_start_hour; default its default)."""
    query = parse_query(text)
    hour = DEFAULT_DAY_START_HOUR if day_start_hour is None else day_start_hour
    day_end = next_day_start(now, hour)
    return [row for row in rows if matches(row, query, now, day_end)], query


# --- building rows ------------------------------------------------------------------------------
def build_rows(decks: Any, db_path: Path) -> list[CardRow]:
    """One row per card of a DeckSet, with its schedule read from the database (read-only)."""
    rows: list[CardRow] = []
    for loaded in decks.decks:
        for card in loaded.deck.cards:
            fixed = fixed_instance(card)  # a numbers card: its values of one fixed drawing
            rows.append(
                CardRow(
                    card_id=card.id,
                    deck_id=loaded.deck.deck,
                    deck_title=loaded.deck.title,
                    level=str(card.level),
                    tags=tuple(card.tags),
                    front=shown_text(card.front, fixed),
                    back=shown_text(card.back, fixed),
                    has_lab=card.lab is not None,
                    numbers_note=drawn_anew_line(fixed) if fixed else "",
                    path=loaded.path,
                    line=loaded.card_lines.get(card.id, 1),
                )
            )
    apply_states(rows, db_path)
    return rows


def apply_states(rows: Iterable[CardRow], db_path: Path) -> None:
    """Refresh every row's schedule from the database (after an action)."""
    with q.read_only(db_path) as conn:
        states = {} if conn is None else {s.card_id: s for s in q.card_states(conn)}
    for row in rows:
        state = states.get(row.card_id)
        row.state = state_name(state)
        row.fsrs_state = state.state if state else None
        row.due = state.due if state else None
        row.suspended = bool(state and state.suspended)
        row.buried_until = state.buried_until if state else None
        row.lapses = state.lapses if state else 0
        row.leech = bool(state and state.leech)
        row.refresh_text()


# --- row actions (each one committed write through the Database facade) -------------------------
def set_suspended(db: Any, row: CardRow, suspended: bool) -> None:
    db.review.set_suspended(row.card_id, row.deck_id, suspended)


def set_buried(db: Any, row: CardRow, until: datetime | None) -> None:
    db.review.set_buried(row.card_id, row.deck_id, until)


def reset_schedule(db: Any, row: CardRow) -> bool:
    """Make the card new again (FSRS state, lapses, leech flag and introduction cleared); the
    review log is kept, and so is a suspension. False when it had no schedule."""
    return bool(db.review.reset_schedule(row.card_id))


def history_lines(db_path: Path, card_id: str) -> list[str]:
    """The card's review log, one line per review, newest first."""
    from drill.review.ratings import RATING_NAMES

    with q.read_only(db_path) as conn:
        rows = [] if conn is None else q.review_history(conn, card_id)
    return [
        f"{at.astimezone().strftime('%Y-%m-%d %H:%M')}  {RATING_NAMES.get(rating, rating):<5}  "
        f"{duration / 1000:.0f} s"
        for at, rating, duration in reversed(rows)
    ]


EDITED_FILE_MAX_BYTES = 64 * 1024 * 1024  # far above any deck file; past it, "unknown"


def file_digest(path: Path) -> str | None:
    """A digest of the file's bytes, to tell whether an editor changed it (None: unreadable,
    so a change cannot be ruled out)."""
    try:
        return hashlib.sha256(read_regular(path, EDITED_FILE_MAX_BYTES)).hexdigest()
    except (OSError, ValueError):
        return None

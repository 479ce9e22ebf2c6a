"""Learning statistics as plain data: what the stats screen draws and `drill stats --json` prints.

UI-free. The heavy lifting (grouping 100k review-log rows) runs in SQLite through
storage.stats_queries; this module turns the grouped rows into the figures:

- reviews per learner's day over the last 365 days, and the current streak;
- true retention: the share of reviews of mature cards (scheduled interval >= 21 days) not rated
  Again, overall, per deck and per week, next to the desired retention; custom-study ratings of
  cards that were not due are left out (review_log.schedule_kept; Anki leaves out filtered-deck
  reviews the same way);
- the due forecast for the next 30 days and the card counts by state; "due today" is the home
  screen's count (drill.review.due.due_counts, the interview plan included), and the forecast
  reads the same planned schedules;
- the weakest tags and decks (most lapses, then lowest retention);
- calibration of lab predictions by stated certainty, and mock-round (talk, coding and
  notebook) and exercise-check results over time.

Learner's days start at `day_start_hour` local time; the UTC offset at `now` is used for the
whole year (a DST change moves a review near the day boundary by an hour at most).

Just over the ~350-line guideline: one figure per function, kept together so the JSON
and the screen read one source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from storage import stats_queries as q

HEATMAP_DAYS = 365
FORECAST_DAYS = 30
RETENTION_WEEKS = 12
WEAKEST = 5
CERTAINTY_LEVELS = ("low", "medium", "high")
# what each stated certainty claims, roughly; a level whose accuracy falls this far below it
# (with enough predictions to tell) is over-confident
CERTAINTY_CLAIM = {"low": 0.5, "medium": 0.7, "high": 0.9}
CALIBRATION_SLACK = 0.15
CALIBRATION_MIN = 5
STATES = ("new", "learning", "young", "mature", "suspended")


@dataclass(frozen=True)
class CardInfo:
    """What the stats need to know about a card from the decks."""

    card_id: str
    deck_id: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Retention:
    reviews: int
    again: int

    @property
    def rate(self) -> float | None:
        return None if self.reviews == 0 else 1 - self.again / self.reviews


@dataclass(frozen=True)
class WeakSpot:
    name: str
    cards: int
    lapses: int
    mature_reviews: int
    retention: float | None


@dataclass(frozen=True)
class CertaintyRow:
    certainty: str
    predictions: int
    right: int

    @property
    def accuracy(self) -> float | None:
        return None if self.predictions == 0 else self.right / self.predictions


@dataclass(frozen=True)
class MockResult:
    started_at: datetime
    round: str
    score: float
    band: str


@dataclass(frozen=True)
class CodingRoundResult:
    """A coding or notebook round (drill.mock.coding.past reads them from their folders): how many
    checks held in the latest grading of each."""

    id: int
    kind: str  # coding | notebook
    started_at: datetime
    finished: bool
    checks_held: int | None  # None: never graded
    checks: int | None

    def result(self) -> str:
        """ "2/3 checks hold" or "not graded", and ", unfinished" while it is."""
        held = f"{self.checks_held}/{self.checks} checks hold" if self.checks else "not graded"
        return held if self.finished else f"{held}, unfinished"


@dataclass(frozen=True)
class ExerciseResult:
    """One exercise check (drill.exercises): how many of its checks passed."""

    checked_at: datetime
    name: str
    status: str  # ok | failed | cancelled | ...
    passed: int
    total: int

    @property
    def solved(self) -> bool:
        return self.status == "ok" and self.total > 0 and self.passed == self.total


@dataclass
class Stats:
    today: date
    desired_retention: float
    heatmap: list[tuple[date, int]]  # oldest first, HEATMAP_DAYS long, ends today
    streak: int
    reviews_total: int
    retention: Retention
    retention_by_deck: dict[str, Retention]
    retention_by_week: list[tuple[date, Retention]]  # week start (Monday), oldest first
    forecast: list[int]  # cards due on each of the next FORECAST_DAYS days (0 = today, overdue)
    counts: dict[str, int]  # STATES -> cards
    weakest_tags: list[WeakSpot]
    weakest_decks: list[WeakSpot]
    calibration: list[CertaintyRow]
    calibration_verdict: str
    mock_results: list[MockResult] = field(default_factory=list)  # talk rounds, oldest first
    coding_rounds: list[CodingRoundResult] = field(default_factory=list)  # newest first
    exercise_results: list[ExerciseResult] = field(default_factory=list)  # oldest first
    due_now: int | None = None  # cards due now by the queue's rule (stats_for: due_counts)

    @property
    def due_today(self) -> int:
        """The "due today" figure: the home screen's and `drill due`'s count when stats_for
        worked it out, else the forecast's day 0."""
        return self.due_now if self.due_now is not None else self.forecast[0]

    @property
    def exercises_solved(self) -> list[str]:
        """Exercises solved at least once (a check with every check passing), in the order
        first solved."""
        return list(dict.fromkeys(r.name for r in self.exercise_results if r.solved))

    @property
    def reviews_today(self) -> int:
        return self.heatmap[-1][1] if self.heatmap else 0

    def to_json(self) -> dict[str, Any]:
        def ret(r: Retention) -> dict[str, Any]:
            return {"reviews": r.reviews, "again": r.again, "rate": r.rate}

        return {
            "today": self.today.isoformat(),
            "desired_retention": self.desired_retention,
            "streak": self.streak,
            "reviews_total": self.reviews_total,
            "reviews_today": self.reviews_today,
            "reviews_per_day": {d.isoformat(): n for d, n in self.heatmap if n},
            "retention": ret(self.retention),
            "retention_by_deck": {k: ret(v) for k, v in self.retention_by_deck.items()},
            "retention_by_week": [
                {"week": w.isoformat(), **ret(r)} for w, r in self.retention_by_week
            ],
            "forecast": self.forecast,
            "due_today": self.due_today,
            "counts": self.counts,
            "weakest_tags": [asdict(w) for w in self.weakest_tags],
            "weakest_decks": [asdict(w) for w in self.weakest_decks],
            "calibration": [_certainty_json(c) for c in self.calibration],
            "calibration_verdict": self.calibration_verdict,
            "mock_results": [_mock_json(m) for m in self.mock_results],
            "coding_rounds": [_coding_json(r) for r in self.coding_rounds],
            "exercise_results": [_exercise_json(e) for e in self.exercise_results],
            "exercises_solved": self.exercises_solved,
        }


def _certainty_json(c: CertaintyRow) -> dict[str, Any]:
    return {
        "certainty": c.certainty,
        "predictions": c.predictions,
        "right": c.right,
        "accuracy": c.accuracy,
    }


def _mock_json(m: MockResult) -> dict[str, Any]:
    return {"started_at": m.started_at.isoformat(), "round": m.round, "score": m.score,
            "band": m.band}  # fmt: skip


def _coding_json(r: CodingRoundResult) -> dict[str, Any]:
    return {"id": r.id, "kind": r.kind, "started_at": r.started_at.isoformat(),
            "finished": r.finished, "checks_held": r.checks_held, "checks": r.checks}  # fmt: skip


def _exercise_json(e: ExerciseResult) -> dict[str, Any]:
    return {"checked_at": e.checked_at.isoformat(), "name": e.name, "status": e.status,
            "passed": e.passed, "total": e.total, "solved": e.solved}  # fmt: skip


def day_shift_minutes(now: datetime, day_start_hour: int) -> int:
    """Minutes to add to a UTC time to land on the learner's day (local offset minus day start)."""
    offset = now.astimezone().utcoffset() or timedelta(0)
    return int(offset.total_seconds() // 60) - day_start_hour * 60


def learner_day(moment: datetime, shift_minutes: int) -> date:
    """The learner's day in the frame the SQL per-day counts use (one offset, taken now), so
    `today` and those counts agree; review.queue.learner_date uses each moment's own offset,
    which differs from this only across a DST change."""
    return (moment.astimezone(UTC) + timedelta(minutes=shift_minutes)).date()


def compute_stats(
    db_path: Path,
    cards: Iterable[CardInfo],
    now: datetime,
    *,
    desired_retention: float = 0.9,
    day_start_hour: int = 4,
) -> Stats:
    """Every figure, from the database at `db_path` (missing: an empty history) and the decks'
    cards. Raises storage.errors.DatabaseError when the file cannot be read."""
    shift = day_shift_minutes(now, day_start_hour)
    with q.read_only(db_path) as conn:
        if conn is None:
            totals, states, calib, mocks, drills = q.ReviewTotals(shift), [], [], [], []
        else:
            totals = q.review_totals(conn, db_path, shift)
            states = q.card_states(conn)
            calib = q.prediction_calibration(conn)
            mocks = q.mock_results(conn)
            drills = q.exercise_results(conn)
    per_day: dict[str, int] = {}
    for (_deck, day), (n, _mature, _again) in totals.by_deck_day.items():
        per_day[day] = per_day.get(day, 0) + n
    by_deck_day = [
        (deck, day, mature, again)
        for (deck, day), (_n, mature, again) in totals.by_deck_day.items()
        if mature
    ]
    by_card = {card: (n, again) for card, (n, again) in totals.by_card.items()}
    stats = build_stats(
        now, list(cards), list(per_day.items()), by_deck_day, by_card, states, calib, mocks,
        desired_retention=desired_retention, shift_minutes=shift,
    )  # fmt: skip
    stats.exercise_results = [ExerciseResult(*row) for row in drills]
    return stats


def build_stats(
    now: datetime,
    cards: list[CardInfo],
    per_day: list[tuple[str, int]],
    by_deck_day: list[tuple[str, str, int, int]],
    by_card: Mapping[str, tuple[int, int]],
    states: list[q.CardStateRow],
    calibration: list[tuple[str, int, int]],
    mocks: list[tuple[datetime, str, float, str]],
    *,
    desired_retention: float,
    shift_minutes: int,
) -> Stats:
    today = learner_day(now, shift_minutes)
    counts_by_day = {date.fromisoformat(d): n for d, n in per_day}
    first = today - timedelta(days=HEATMAP_DAYS - 1)
    heatmap = [(first + timedelta(days=i), 0) for i in range(HEATMAP_DAYS)]
    heatmap = [(d, counts_by_day.get(d, 0)) for d, _ in heatmap]

    deck_ret: dict[str, list[int]] = {}
    week_ret: dict[date, list[int]] = {}
    for deck_id, day_text, n, again in by_deck_day:
        deck_ret.setdefault(deck_id, [0, 0])
        deck_ret[deck_id][0] += n
        deck_ret[deck_id][1] += again
        day = date.fromisoformat(day_text)
        week = day - timedelta(days=day.weekday())
        week_ret.setdefault(week, [0, 0])
        week_ret[week][0] += n
        week_ret[week][1] += again
    this_week = today - timedelta(days=today.weekday())
    weeks = [this_week - timedelta(weeks=RETENTION_WEEKS - 1 - i) for i in range(RETENTION_WEEKS)]
    total = [sum(v[0] for v in deck_ret.values()), sum(v[1] for v in deck_ret.values())]

    state_of = {row.card_id: row for row in states}
    return Stats(
        today=today,
        desired_retention=desired_retention,
        heatmap=heatmap,
        streak=streak(counts_by_day, today),
        reviews_total=sum(n for _, n in per_day),
        retention=Retention(*total),
        retention_by_deck={k: Retention(*v) for k, v in sorted(deck_ret.items())},
        retention_by_week=[(w, Retention(*week_ret.get(w, [0, 0]))) for w in weeks],
        forecast=forecast(cards, state_of, now, today, shift_minutes),
        counts=card_counts(cards, state_of),
        weakest_tags=weakest(cards, state_of, by_card, lambda c: c.tags),
        weakest_decks=weakest(cards, state_of, by_card, lambda c: (c.deck_id,)),
        calibration=[_certainty(calibration, level) for level in CERTAINTY_LEVELS],
        calibration_verdict=calibration_verdict(calibration),
        mock_results=[MockResult(*m) for m in mocks],
    )


def streak(counts_by_day: Mapping[date, int], today: date) -> int:
    """Consecutive days with reviews, ending today (or yesterday: today is not over yet)."""
    day = today if counts_by_day.get(today) else today - timedelta(days=1)
    days = 0
    while counts_by_day.get(day):
        days += 1
        day -= timedelta(days=1)
    return days


def state_name(row: q.CardStateRow | None) -> str:
    """new | learning | young | mature (suspension is a flag, see card_counts)."""
    if row is None or row.state is None:
        return "new"
    if row.state != 2:  # fsrs State: 1 Learning, 2 Review, 3 Relearning
        return "learning"
    interval = (row.due - row.last_review) if row.due and row.last_review else timedelta(0)
    return "mature" if interval >= timedelta(days=q.MATURE_DAYS) else "young"


def card_counts(cards: list[CardInfo], state_of: Mapping[str, q.CardStateRow]) -> dict[str, int]:
    counts = dict.fromkeys(STATES, 0)
    for card in cards:
        row = state_of.get(card.card_id)
        counts["suspended" if row is not None and row.suspended else state_name(row)] += 1
    return counts


def forecast(
    cards: list[CardInfo],
    state_of: Mapping[str, Any],  # q.CardStateRow or storage.snapshot.ScheduleRow
    now: datetime,
    today: date,
    shift_minutes: int,
) -> list[int]:
    due = [0] * FORECAST_DAYS
    for card in cards:
        row = state_of.get(card.card_id)
        if row is None or row.state is None or row.suspended or row.due is None:
            continue
        offset = (learner_day(row.due, shift_minutes) - today).days
        if offset < FORECAST_DAYS:
            due[max(0, offset)] += 1
    return due


def weakest(
    cards: list[CardInfo],
    state_of: Mapping[str, q.CardStateRow],
    by_card: Mapping[str, tuple[int, int]],
    groups_of: Any,
) -> list[WeakSpot]:
    """Groups (tags or decks) with lapses or failed mature reviews: most lapses first, then
    lowest retention."""
    sums: dict[str, list[int]] = {}
    for card in cards:
        row = state_of.get(card.card_id)
        lapses = row.lapses if row is not None else 0
        reviews, again = by_card.get(card.card_id, (0, 0))
        for name in groups_of(card):
            entry = sums.setdefault(name, [0, 0, 0, 0])
            entry[0] += 1
            entry[1] += lapses
            entry[2] += reviews
            entry[3] += again
    spots = [
        WeakSpot(name, n, lapses, reviews, None if reviews == 0 else 1 - again / reviews)
        for name, (n, lapses, reviews, again) in sums.items()
        if lapses or again
    ]
    spots.sort(key=lambda s: (-s.lapses, 1.0 if s.retention is None else s.retention, s.name))
    return spots[:WEAKEST]


def _certainty(rows: list[tuple[str, int, int]], level: str) -> CertaintyRow:
    n = sum(c for name, c, _ in rows if name == level)
    right = sum(r for name, _, r in rows if name == level)
    return CertaintyRow(level, n, right)


def calibration_verdict(rows: list[tuple[str, int, int]]) -> str:
    """One sentence: over-confident where a certainty level's accuracy falls well below what
    it claims; calibrated otherwise; "not enough" below CALIBRATION_MIN predictions a level."""
    judged = [_certainty(rows, level) for level in CERTAINTY_LEVELS]
    judged = [c for c in judged if c.predictions >= CALIBRATION_MIN]
    if not judged:
        return f"not enough predictions yet ({CALIBRATION_MIN} per certainty level to judge)"
    over = [
        c.certainty
        for c in judged
        if (c.accuracy or 0.0) < CERTAINTY_CLAIM[c.certainty] - CALIBRATION_SLACK
    ]
    if over:
        return f"over-confident at {', '.join(over)} certainty"
    under = [c.certainty for c in judged if c.certainty == "low" and (c.accuracy or 0) >= 0.8]
    if under:
        return "under-confident: right most of the time you said low"
    return "calibrated: accuracy matches the certainty you state"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 review', '3 reviews': the wording of the stats screen, `drill stats` and the exercise
    list."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def cards_from_decks(decks: Any) -> list[CardInfo]:
    """CardInfo for every card of a drill.decks.loader.DeckSet."""
    return [
        CardInfo(card.id, loaded.deck.deck, tuple(card.tags))
        for loaded in decks.decks
        for card in loaded.deck.cards
    ]


def stats_for(
    decks: Any,
    db_path: Path,
    settings: Any,
    now: datetime,
    coding_rounds: Iterable[CodingRoundResult] = (),
) -> Stats:
    """The app's stats: its loaded DeckSet, database file and Settings, and the coding and
    notebook rounds (drill.mock.coding.past.stats_with_rounds reads them: the stats screen and
    `drill stats` both go through it)."""
    stats = compute_stats(
        db_path,
        cards_from_decks(decks),
        now,
        desired_retention=settings.desired_retention,
        day_start_hour=settings.day_start_hour,
    )
    stats.coding_rounds = list(coding_rounds)
    planned_due_figures(stats, decks, db_path, settings, now)
    return stats


def planned_due_figures(stats: Stats, decks: Any, db_path: Path, settings: Any,
                        now: datetime) -> None:  # fmt: skip
    """Set the stats' due figures by the queue's one rule: "due today" is due_counts' total
    (what home and `drill due` show) and the forecast counts the planned schedules (the
    interview plan's moves included). Left as they are when the file cannot be read light."""
    from drill.review.due import due_counts
    from drill.review.queue import planned_review_day
    from storage.snapshot import read_snapshot

    snapshot = read_snapshot(db_path)
    if snapshot is None:
        return
    day = planned_review_day(now, settings, snapshot, decks.index)
    _, total = due_counts(decks.outline(), snapshot.schedules, now, day)
    stats.due_now = total["due"]
    shift = day_shift_minutes(now, settings.day_start_hour)
    planned = day.planned(snapshot.schedules, now)
    stats.forecast = forecast(cards_from_decks(decks), planned, now, stats.today, shift)

"""Scheduling like Anki, checked against independent references: fsrs-rs (the Rust FSRS Anki
itself runs, via fsrs-rs-python) for the memory state and the unfuzzed intervals, and Anki's
fuzz ranges (drill.review.fuzz, itself checked against Anki's table in test_fuzz.py).

Conventions checked: elapsed time in learner days (days start at 04:00 local), a review card
due from the start of its due day, Hard < Good < Easy after fuzz, the preview equal to what the
rating gives. The simulation runs 90 days in Europe/Berlin across the March DST change.
"""

from __future__ import annotations

import random
import time as pytime
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS
from fsrs_rs_python import FSRS, MemoryState

from drill.decks.index import DeckOutline
from drill.review.due import due_counts
from drill.review.fuzz import fuzz_bounds, round_half_up
from drill.review.queue import build_queue, review_day
from drill.review.scheduler import make_scheduler, next_state, preview_intervals
from drill.settings import Settings
from storage.schema_names import StateDict
from storage.snapshot import ScheduleRow, Snapshot

BERLIN = ZoneInfo("Europe/Berlin")
SETTINGS = Settings()  # day_start_hour 4, desired retention 0.9
REFERENCE = FSRS(list(DEFAULT_PARAMETERS))
NAMES = {1: "again", 2: "hard", 3: "good", 4: "easy"}
MAX_DAYS = 36500


@pytest.fixture
def berlin_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's zone set to Berlin: review_day, like the app, works in local time."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    pytime.tzset()
    yield
    monkeypatch.undo()
    pytime.tzset()


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=BERLIN).astimezone(UTC)  # type: ignore[misc]


def day_of(moment: datetime) -> date:
    """The learner's day, worked out here independently: the Berlin wall clock minus 4 hours."""
    return (moment.astimezone(BERLIN) - timedelta(hours=4)).date()


def reference_states(before: StateDict | None, now: datetime):  # type: ignore[no-untyped-def]
    """fsrs-rs' next states from the stored memory state, elapsed days in learner days."""
    if before is None:
        return REFERENCE.next_states(None, SETTINGS.desired_retention, 0)
    memory = MemoryState(before["stability"], before["difficulty"])
    elapsed = (day_of(now) - day_of(before["last_review"])).days
    return REFERENCE.next_states(memory, SETTINGS.desired_retention, elapsed)


def review_state(stability: float, difficulty: float, last: datetime) -> StateDict:
    return {
        "state": 2, "step": None, "stability": stability, "difficulty": difficulty,
        "due": last + timedelta(days=1), "last_review": last, "reps": 3, "lapses": 0,
    }  # fmt: skip


# --- single reviews ----------------------------------------------------------------------------
def test_elapsed_time_counts_learner_days_not_24_hour_periods() -> None:
    evening = local(2026, 5, 4, 23, 0)
    before = review_state(0.5, 5.0, evening)
    plain = make_scheduler(SETTINGS, fuzzing=False)
    for hours, elapsed in ((4, 0), (6, 1)):  # 03:00 is still the evening's day; 05:00 is not
        now = evening + timedelta(hours=hours)
        after = next_state(plain, before, 3, now, SETTINGS, tz=BERLIN)
        expected = REFERENCE.next_states(MemoryState(0.5, 5.0), 0.9, elapsed).good.memory
        assert after["stability"] == pytest.approx(expected.stability, rel=1e-4), hours
        assert after["difficulty"] == pytest.approx(expected.difficulty, rel=1e-4), hours


def test_a_review_card_is_due_from_the_start_of_its_due_day() -> None:
    now = local(2026, 5, 4, 21, 30)
    before = review_state(10.0, 5.0, local(2026, 4, 24, 12, 0))
    after = next_state(make_scheduler(SETTINGS), before, 3, now, SETTINGS, card_id="c", tz=BERLIN)
    due_local = after["due"].astimezone(BERLIN)
    assert (due_local.hour, due_local.minute) == (4, 0) and due_local.date() > date(2026, 5, 5)
    learning = next_state(make_scheduler(SETTINGS), before, 1, now, SETTINGS, tz=BERLIN)
    assert learning["state"] == 3 and learning["due"] == now + timedelta(minutes=10)  # by time


def test_hard_good_and_easy_strictly_increase_where_rounding_would_tie_them() -> None:
    last = local(2026, 5, 1, 10, 0)
    now = local(2026, 5, 2, 10, 0)
    ties = 0
    for stability in (0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.2, 1.6, 2.0, 3.0):
        before = review_state(stability, 8.0, last)
        states = reference_states(before, now)
        rounded = [round(getattr(states, NAMES[r]).interval) for r in (2, 3, 4)]
        ties += len(set(rounded)) < 3 or min(rounded) < 1
        for fuzzing in (False, True):
            scheduler = make_scheduler(SETTINGS, fuzzing=fuzzing)
            for card_id in ("a", "b", "c"):
                preview = preview_intervals(
                    scheduler, before, now, SETTINGS, card_id=card_id, tz=BERLIN
                )
                assert timedelta(days=1) <= preview[2] < preview[3] < preview[4], preview
    assert ties >= 3  # the reference alone ties (or gives 0 days) for these


def test_graduating_easy_lands_after_what_good_gives() -> None:
    scheduler = make_scheduler(SETTINGS)
    at = local(2026, 5, 4, 9, 0)
    first = next_state(scheduler, None, 3, at, SETTINGS, card_id="x", tz=BERLIN)
    second = next_state(scheduler, first, 3, at + timedelta(minutes=1), SETTINGS, tz=BERLIN)
    now = at + timedelta(minutes=12)  # on the last learning step: Good and Easy graduate
    preview = preview_intervals(scheduler, second, now, SETTINGS, card_id="x", tz=BERLIN)
    assert preview[3] >= timedelta(days=1) and preview[4] > preview[3]


# --- a simulated history -----------------------------------------------------------------------
@dataclass
class Tally:
    reviews: int = 0
    review_cards: int = 0  # reviews of cards in the Review state, passing ratings
    fuzzed: int = 0  # intervals with a fuzz range of more than one day
    ends: set[str] = field(default_factory=set)  # "lower" / "upper" seen
    withheld: int = 0  # review cards of a past or the current day the queue did not offer


def simulate(days: int, cards: int, *, fuzzing: bool, seed: int) -> Tally:
    """`cards` cards over `days` days from 15 February 2026 (Berlin): each day the learner opens
    the queue once at a random time (some after midnight, before the 04:00 day start), reviews
    what it offers, and repeats learning steps as they come due."""
    rng = random.Random(seed)
    scheduler = make_scheduler(SETTINGS, fuzzing=fuzzing)
    ids = [f"card-{i:03d}" for i in range(cards)]
    outline = [DeckOutline("d", "D", tuple(ids))]
    states: dict[str, StateDict] = {}
    tally = Tally()
    first = date(2026, 2, 15)
    for offset in range(days):
        hour = rng.choice([0, 1, 3, 7, 9, 12, 18, 21, 23])
        day = first + timedelta(days=offset + (1 if hour < 4 else 0))
        now = datetime.combine(day, time(hour, rng.randrange(60)), BERLIN).astimezone(UTC)
        rows = {cid: _row(cid, s) for cid, s in states.items()}
        day_info = review_day(now, Settings(new_cards_per_day=4), Snapshot(schedules=rows))
        queue = build_queue(outline, rows, now, new_limit=4, introduced_today=0,
                            day_end=day_info.next_start)  # fmt: skip
        offered = {e.card_id for e in queue}
        _, totals = due_counts(outline, rows, now, day_info)
        assert totals["due"] == sum(1 for e in queue if not e.is_new)
        for cid, state in states.items():
            if state["state"] == 2 and day_of(state["due"]) <= day_of(now):
                tally.withheld += cid not in offered
        pending = [(now, e.card_id) for e in queue]
        while pending:
            pending.sort()
            at, cid = pending.pop(0)
            at = max(at, now)
            rating = rng.choices([1, 2, 3, 4], weights=[15, 15, 60, 10])[0]
            after = check_one_review(scheduler, states.get(cid), cid, rating, at, tally, fuzzing)
            states[cid] = after
            now = at + timedelta(seconds=20)
            if after["state"] != 2 and after["due"] - now < timedelta(hours=2):
                pending.append((after["due"], cid))
    return tally


def _row(card_id: str, state: StateDict) -> ScheduleRow:
    return ScheduleRow(card_id=card_id, deck_id="d", state=state["state"], due=state["due"],
                       suspended=False, buried_until=None, content_hash=None,
                       introduced_at=None)  # fmt: skip


def check_one_review(
    scheduler,
    before,
    card_id,
    rating,
    now,
    tally,
    fuzzing,  # type: ignore[no-untyped-def]
) -> StateDict:
    preview = preview_intervals(scheduler, before, now, SETTINGS, card_id=card_id, tz=BERLIN)
    after = next_state(scheduler, before, rating, now, SETTINGS, card_id=card_id, tz=BERLIN)
    tally.reviews += 1
    reference = reference_states(before, now)
    memory = getattr(reference, NAMES[rating]).memory
    assert after["stability"] == pytest.approx(memory.stability, rel=2e-4)
    assert after["difficulty"] == pytest.approx(memory.difficulty, rel=2e-4)
    if after["state"] == 2:
        due = after["due"].astimezone(BERLIN)
        assert (due.hour, due.minute, due.second) == (4, 0, 0)  # due from its day's start
        assert preview[rating] == timedelta(days=(day_of(after["due"]) - day_of(now)).days)
    else:
        assert preview[rating] == after["due"] - now
    if before is not None and before["state"] == 2 and rating >= 2:
        check_passing_chain(before, preview, reference, tally, fuzzing)
    return after


def check_passing_chain(before, preview, reference, tally, fuzzing) -> None:  # type: ignore[no-untyped-def]
    """Hard, Good, Easy: each in Anki's fuzz range of fsrs-rs' interval, held above the one
    before it; without fuzz, exactly fsrs-rs' interval rounded (or one over the one before)."""
    tally.review_cards += 1
    floor = 1
    for rating in (2, 3, 4):
        days = preview[rating].days
        assert preview[rating] == timedelta(days=days)
        target = getattr(reference, NAMES[rating]).interval
        if fuzzing:
            lower, upper = fuzz_bounds(target, floor, MAX_DAYS)
            assert lower <= days <= upper, (rating, target, floor, days)
            if upper > lower:
                tally.fuzzed += 1
                tally.ends |= {"lower"} if days == lower else {"upper"} if days == upper else set()
        else:
            assert days == max(round_half_up(target), floor, 1), (rating, target, floor)
        floor = days + 1


@pytest.mark.parametrize("fuzzing", [True, False])
def test_ninety_simulated_days_schedule_like_anki_over_fsrs_rs(
    berlin_local_time: None, fuzzing: bool
) -> None:
    tally = simulate(90, 30, fuzzing=fuzzing, seed=11)
    assert tally.withheld == 0
    assert tally.reviews > 400 and tally.review_cards > 150, tally
    if fuzzing:
        assert tally.fuzzed > 100 and tally.ends == {"lower", "upper"}, tally


def test_the_queue_offers_review_cards_due_later_today_but_not_learning_cards(
    berlin_local_time: None,
) -> None:
    now = local(2026, 5, 4, 9, 0)
    evening = local(2026, 5, 4, 18, 0)  # a due time stored by an older drill: mid-day
    rows = {
        "review-tonight": ScheduleRow("review-tonight", "d", 2, evening, False, None, None, None),
        "review-tomorrow": ScheduleRow(
            "review-tomorrow", "d", 2, local(2026, 5, 5, 4, 0), False, None, None, None
        ),
        "learning-tonight": ScheduleRow(
            "learning-tonight", "d", 1, evening, False, None, None, None
        ),
    }
    outline = [DeckOutline("d", "D", tuple(rows))]
    day = review_day(now, SETTINGS, Snapshot(schedules=rows))
    queue = build_queue(outline, rows, now, new_limit=0, introduced_today=0,
                        day_end=day.next_start)  # fmt: skip
    assert [e.card_id for e in queue] == ["review-tonight"]
    summaries, totals = due_counts(outline, rows, now, day)
    assert totals["due"] == 1 and summaries[0].due == 1

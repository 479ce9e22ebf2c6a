"""The interview plan's scheduling overlay (drill.review.deadline), with a fixed clock: pacing,
the budget cap, the peak on the day, the final pass and its load balance, the return to plain
FSRS after the date, and all of it by learner day across a daylight-saving change."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from fsrs import Card as FsrsCard
from fsrs import Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.decks.loader import load_decks
from drill.review.deadline import (
    DEFAULT_DECAY,
    DEFAULT_SECONDS_PER_REVIEW,
    FINAL_PASS_DAYS,
    FINAL_PASS_SHARE,
    NEW_CARD_ANSWERS,
    Deadline,
    deadline_for,
    final_pass_days,
    final_pass_length,
    planned_schedules,
    recall_on,
)
from drill.review.pacing import (
    AHEAD_OF_PACE,
    PLANNED_SHARE,
    REVIEW_ANSWERS,
    SHORT_SHARE,
    coverage,
    day_quota,
    fitted_to_budget,
    new_quota,
    order_new,
    pace,
    plan_coverage,
)
from drill.settings import Settings
from drill.times import learner_date, start_of
from storage.snapshot import PlanRow, ScheduleRow

BERLIN = ZoneInfo("Europe/Berlin")  # clocks go forward on 2026-03-29 (02:00 -> 03:00)
HOUR = 4
DAY = date(2026, 3, 31)  # the interview; final window 03-28 .. 03-30 (across the change)


def deadline(values: dict[str, float] | None = None, **changes: object) -> Deadline:
    base: dict[str, object] = {
        "interview_day": DAY,
        "target_recall": 0.9,
        "minutes_per_day": 45,
        "card_values": values or {},
        "decay": DEFAULT_DECAY,
    }
    base.update(changes)
    return Deadline(**base)  # type: ignore[arg-type]


def at(day: date, hour: int = 9) -> datetime:
    """`hour`:00 Berlin wall-clock time on `day`, aware."""
    return datetime(day.year, day.month, day.day, hour, tzinfo=BERLIN)


def review_row(card_id: str, last: date, due: date, stability: float = 10.0) -> ScheduleRow:
    return ScheduleRow(
        card_id=card_id,
        deck_id="d",
        state=2,
        due=start_of(due, HOUR, BERLIN).astimezone(UTC),
        suspended=False,
        buried_until=None,
        content_hash=None,
        introduced_at=at(last - timedelta(days=5)).astimezone(UTC),
        last_review=at(last).astimezone(UTC),
        stability=stability,
        difficulty=5.0,
    )


def due_day(row: ScheduleRow) -> date:
    assert row.due is not None
    return learner_date(row.due, HOUR, BERLIN)


# --- memory ----------------------------------------------------------------------------------
def test_the_default_decay_is_fsrs_default_w20() -> None:
    assert DEFAULT_PARAMETERS[20] == DEFAULT_DECAY


def test_recall_on_is_fsrs_retrievability() -> None:
    scheduler = Scheduler()
    last = datetime(2026, 3, 1, 9, tzinfo=UTC)
    for stability, days in ((2.0, 0), (2.0, 3), (12.5, 9), (40.0, 30)):
        card = FsrsCard(state=State.Review, stability=stability, difficulty=5.0, due=last,
                        last_review=last)  # fmt: skip
        expected = scheduler.get_card_retrievability(card, last + timedelta(days=days))
        got = recall_on(stability, last.date(), last.date() + timedelta(days=days), DEFAULT_DECAY)
        assert abs(got - expected) < 1e-12
    assert recall_on(5.0, DAY, DAY, DEFAULT_DECAY) == 1.0


# --- pacing ----------------------------------------------------------------------------------
def test_the_pace_introduces_every_card_by_the_day_before_the_final_window() -> None:
    plan = deadline(minutes_per_day=600)
    today = DAY - timedelta(days=14)  # introduction days: today .. 03-27, 11 days
    assert pace(plan, today, 100) == 10  # ceil(100 / 11)
    assert AHEAD_OF_PACE == 2.0
    assert new_quota(plan, today, 100, 0.0) == 20  # up to twice the pace, budget allowing
    left, day, introduced = 100, today, []
    while left:
        count = new_quota(plan, day, left, 0.0)
        introduced.append((day, count))
        left -= count
        day += timedelta(days=1)
    assert introduced[-1][0] <= plan.final_window()[0] - timedelta(days=1)
    # in the window (or later, before the date) what is left comes at once, budget allowing
    assert new_quota(plan, DAY - timedelta(days=2), 7, 0.0) == 7


def test_the_budget_caps_the_quota_after_todays_reviews() -> None:
    plan = deadline(minutes_per_day=10, seconds_per_review=20.0)  # 600 s; a new card 60 s
    today = DAY - timedelta(days=20)
    assert NEW_CARD_ANSWERS * 20.0 == plan.new_card_seconds == 60.0
    assert PLANNED_SHARE == 0.85  # the plan fills 510 s of the 600 with work it foresees
    assert new_quota(plan, today, 1000, 0.0) == 8
    assert new_quota(plan, today, 1000, 210.0) == 5  # reviews of 210 s leave room for 5
    assert new_quota(plan, today, 1000, 510.0) == 0  # reviews alone fill the planned share
    assert new_quota(plan, today, 3, 0.0) == 2  # twice the pace (1) is lower than the budget


def test_no_quota_once_the_date_is_here() -> None:
    assert new_quota(deadline(), DAY, 50, 0.0) == 0
    assert new_quota(deadline(), DAY + timedelta(days=3), 50, 0.0) == 0


def test_new_cards_come_in_value_order_ties_in_deck_order() -> None:
    plan = deadline({"a": 1.0, "b": 3.0, "c": 1.0, "d": 3.0, "e": 0.2})
    assert order_new(["a", "b", "c", "d", "e", "x"], plan) == ["b", "d", "a", "c", "e", "x"]
    assert order_new(["a", "b", "c"], None) == ["a", "b", "c"]


def test_the_quota_holds_all_day() -> None:
    ids = [f"n{i}" for i in range(60)]
    plan = deadline(dict.fromkeys(ids, 1.0), minutes_per_day=600)
    morning = at(DAY - timedelta(days=12), 5)
    today = learner_date(morning, HOUR, BERLIN)
    rows: dict[str, ScheduleRow] = {}
    for i in range(10):  # introduced earlier, due today
        rows[ids[i]] = review_row(ids[i], today - timedelta(days=3), today)
    before = day_quota(rows, plan, morning, HOUR, BERLIN)
    assert before == new_quota(plan, today, 50, 10 * plan.seconds_per_review)
    evening = morning + timedelta(hours=12)
    later = dict(rows)
    for i in range(10):  # reviewed today: due again in a week
        later[ids[i]] = review_row(ids[i], today, today + timedelta(days=7))
    for i in range(10, 10 + before):  # today's new cards, introduced and in learning
        later[ids[i]] = ScheduleRow(ids[i], "d", 1, evening + timedelta(minutes=10), False,
                                    None, None, evening, last_review=evening)  # fmt: skip
    assert day_quota(later, plan, evening, HOUR, BERLIN) == before
    tomorrow = at(today + timedelta(days=1), 5)
    # a new day: today's new cards count as introduced, their learning steps as reviews
    expected = new_quota(plan, today + timedelta(days=1), 50 - before, before * 20.0)
    assert day_quota(later, plan, tomorrow, HOUR, BERLIN) == expected


# --- the planned schedule --------------------------------------------------------------------
def test_no_plan_or_after_the_date_is_plain_fsrs() -> None:
    rows = {"c": review_row("c", DAY - timedelta(days=20), DAY + timedelta(days=30))}
    now = at(DAY - timedelta(days=10))
    assert planned_schedules(rows, None, now, HOUR, BERLIN) is rows
    for after in (DAY, DAY + timedelta(days=1), DAY + timedelta(days=40)):
        assert planned_schedules(rows, deadline(), at(after), HOUR, BERLIN) is rows
    moved = planned_schedules(rows, deadline(), now, HOUR, BERLIN)
    assert due_day(moved["c"]) < DAY  # the same card, before the date: moved


def test_learning_cards_are_never_moved() -> None:
    learning = ScheduleRow("l", "d", 3, at(DAY + timedelta(days=2)).astimezone(UTC), False, None,
                           None, at(DAY - timedelta(days=30)), last_review=at(DAY -
                           timedelta(days=9)), stability=0.5)  # fmt: skip
    planned = planned_schedules({"l": learning}, deadline(), at(DAY - timedelta(days=8)), HOUR,
                                BERLIN)  # fmt: skip
    assert planned["l"] == learning


def test_the_final_pass_brings_every_card_into_the_window() -> None:
    first, last = deadline().final_window()
    assert (first, last) == (date(2026, 3, 28), date(2026, 3, 30))
    long_ago = DAY - timedelta(days=20)
    rows = {
        "far": review_row("far", long_ago, DAY + timedelta(days=40)),
        "in-window": review_row("in-window", long_ago, first),  # its own due: kept
        "before": review_row("before", long_ago, first - timedelta(days=2)),  # kept
    }
    planned = planned_schedules(rows, deadline(), at(DAY - timedelta(days=10)), HOUR, BERLIN)
    assert first <= due_day(planned["far"]) <= last
    assert planned["in-window"] == rows["in-window"]  # never later than its own due
    assert planned["before"] == rows["before"]
    # reviewed in the window, its next due is after the date with recall kept: left alone
    done = {"far": review_row("far", first, DAY + timedelta(days=30), stability=60.0)}
    assert planned_schedules(done, deadline(), at(first + timedelta(days=1)), HOUR,
                             BERLIN)["far"] == done["far"]  # fmt: skip


def test_the_final_pass_spreads_200_cards_evenly_most_valuable_last() -> None:
    ids = [f"card-{i:03d}" for i in range(200)]
    values = {cid: (3.0 if i % 4 == 0 else 1.0) for i, cid in enumerate(ids)}
    plan = deadline(values)
    rows = {cid: review_row(cid, DAY - timedelta(days=25), DAY + timedelta(days=20)) for cid in ids}
    planned = planned_schedules(rows, plan, at(DAY - timedelta(days=6)), HOUR, BERLIN)
    per_day = Counter(due_day(planned[cid]) for cid in ids)
    first, last = plan.final_window()
    assert set(per_day) == {first, first + timedelta(days=1), last}
    even = 200 / 3
    assert all(abs(n - even) <= 0.15 * even for n in per_day.values()), per_day
    assert {due_day(planned[cid]) for cid in ids if values[cid] == 3.0} == {last}


def test_a_cards_final_pass_day_does_not_move_while_the_window_runs() -> None:
    ids = [f"c{i}" for i in range(30)]
    plan = deadline(dict.fromkeys(ids, 1.0))
    rows = {cid: review_row(cid, DAY - timedelta(days=12), DAY + timedelta(days=9)) for cid in ids}
    first, _ = plan.final_window()
    days = final_pass_days(rows, plan, HOUR, BERLIN)
    later = dict(rows)  # the first window day: its cards reviewed, a new card introduced
    for cid in ids:
        if days[cid] == first:
            later[cid] = review_row(cid, first, DAY + timedelta(days=12), stability=30.0)
    fresh = at(first, 10).astimezone(UTC)
    later["new"] = ScheduleRow("new", "d", 1, fresh, False, None, None, fresh, last_review=fresh)
    assert final_pass_days(later, plan, HOUR, BERLIN) == days


def test_peak_on_the_day_brings_a_weak_card_before_the_date() -> None:
    first, last = deadline().final_window()  # last: the day before the date
    weak = review_row("weak", first, DAY + timedelta(days=1), stability=2.0)
    strong = review_row("strong", first, DAY + timedelta(days=1), stability=80.0)
    eve = review_row("eve", last, DAY + timedelta(days=1), stability=2.0)
    assert recall_on(2.0, first, DAY, DEFAULT_DECAY) < 0.9
    rows = {"weak": weak, "strong": strong, "eve": eve}
    planned = planned_schedules(rows, deadline(), at(last), HOUR, BERLIN)
    assert due_day(planned["weak"]) == last
    assert planned["strong"] == strong  # recall on the date above the target
    assert planned["eve"] == eve  # reviewed on the last day already: no loop within a day
    looser = deadline(target_recall=0.7)
    assert planned_schedules(rows, looser, at(last), HOUR, BERLIN)["weak"] == weak


def test_planned_days_start_at_the_day_start_hour_across_the_dst_change() -> None:
    ids = [f"c{i}" for i in range(9)]
    rows = {cid: review_row(cid, DAY - timedelta(days=15), DAY + timedelta(days=15)) for cid in ids}
    planned = planned_schedules(rows, deadline(), at(date(2026, 3, 27)), HOUR, BERLIN)
    offsets = set()
    for cid in ids:
        moved = planned[cid].due
        assert moved is not None
        local = moved.astimezone(BERLIN)
        assert (local.hour, local.minute) == (HOUR, 0)
        offsets.add(local.utcoffset())
    assert offsets == {timedelta(hours=1), timedelta(hours=2)}  # 03-28 CET, 03-29/30 CEST
    assert {due_day(planned[cid]) for cid in ids} == {date(2026, 3, 28), date(2026, 3, 29),
                                                       date(2026, 3, 30)}  # fmt: skip


# --- coverage --------------------------------------------------------------------------------
def test_coverage_says_when_the_budget_leaves_cards_out_lowest_value_first() -> None:
    ids = [f"a{i}" for i in range(40)] + [f"z{i}" for i in range(40)]
    values = {cid: (3.0 if cid.startswith("a") else 0.2) for cid in ids}
    decks = {cid: ("llm-scale" if cid.startswith("a") else "biotech") for cid in ids}
    today = DAY - timedelta(days=10)
    roomy = coverage(deadline(values, minutes_per_day=120, card_decks=decks), today, ids)
    assert roomy.covered and roomy.left_out_decks == ()
    tight = coverage(deadline(values, minutes_per_day=5, card_decks=decks), today, ids)
    assert not tight.covered and tight.left_out > 0
    assert tight.left_out_decks[0] == "biotech"
    assert tight.last_introduction_day == date(2026, 3, 27)


# --- the plan as the scheduler reads it ------------------------------------------------------
def test_the_final_pass_grows_to_fit_the_budget() -> None:
    assert final_pass_length(198, 45, 20.0) == FINAL_PASS_DAYS  # 3960 s in 3 days: fits
    days = final_pass_length(198, 30, 20.0)  # 3 days would be 1320 s a day of 1800
    assert days == 4 and 198 / days * 20.0 <= FINAL_PASS_SHARE * 1800
    assert final_pass_length(5000, 10, 20.0) == 7  # never more than a week


def test_deadline_for_reads_the_role_table_and_the_settings(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "deck: biotech\ntitle: B\ncards:\n  - {id: b0, level: easy, front: F?, back: B.}\n"
    )
    (tmp_path / "b.yaml").write_text(
        "deck: llm-scale\ntitle: L\ncards:\n  - {id: l0, level: easy, front: F?, back: B.}\n"
    )
    index = load_decks([tmp_path], include_bundled=False).index
    assert index is not None
    plan = PlanRow(DAY, "training-infra", 30, 0.9, datetime(2026, 3, 1, tzinfo=UTC))
    made = deadline_for(plan, index, Settings())
    assert made is not None
    assert made.card_values["l0"] > made.card_values["b0"]  # biotech last for training-infra
    assert made.card_decks == {"b0": "biotech", "l0": "llm-scale"}
    assert (made.decay, made.seconds_per_review) == (DEFAULT_DECAY, DEFAULT_SECONDS_PER_REVIEW)
    personal = (*DEFAULT_PARAMETERS[:20], 0.3)
    tuned = deadline_for(plan, index, Settings(fsrs_parameters=personal), 12.5)
    assert tuned is not None and (tuned.decay, tuned.seconds_per_review) == (0.3, 12.5)
    biotech = deadline_for(PlanRow(DAY, "biotech-ml", 30, 0.9, plan.created_at), index,
                           Settings())  # fmt: skip
    assert biotech is not None and biotech.card_values["b0"] > biotech.card_values["l0"]
    assert deadline_for(None, index, Settings()) is None
    unknown = PlanRow(DAY, "astronaut", 30, 0.9, plan.created_at)
    assert deadline_for(unknown, index, Settings()) is None  # plain FSRS, never a crash


# --- a budget short of cards -----------------------------------------------------------------
def test_short_of_cards_the_final_pass_gives_way_to_new_cards() -> None:
    values = {f"c{i:03}": 1.0 for i in range(200)}
    known = {
        cid: review_row(cid, DAY - timedelta(days=12), DAY + timedelta(days=20), 100.0)
        for cid in list(values)[:20]
    }  # fmt: skip (strong: the peak rule leaves them)
    now = at(DAY - timedelta(days=10))
    roomy = deadline(values, minutes_per_day=600)
    assert fitted_to_budget(roomy, known, now, HOUR, BERLIN) is roomy  # 180 cards fit
    tight = deadline(values, minutes_per_day=10)
    fitted = fitted_to_budget(tight, known, now, HOUR, BERLIN)
    assert not coverage(tight, learner_date(now, HOUR, BERLIN), list(values)[20:], 20).covered
    assert fitted.final_pass_days == 0  # no final pass: new cards up to the eve
    assert fitted.last_introduction_day() == DAY - timedelta(days=1)
    # the known cards keep their FSRS due (no final-pass day) under the fitted plan
    in_window = at(DAY - timedelta(days=2))
    assert planned_schedules(known, fitted, in_window, HOUR, BERLIN) == known
    # the whole budget short of the planned share goes to new cards
    assert SHORT_SHARE == 0.95  # nearly all: the minutes spent today are counted
    assert new_quota(fitted, DAY - timedelta(days=2), 180, 0.0) == 9  # 0.95 * 600 s / 60 s
    assert new_quota(tight, DAY - timedelta(days=20), 180, 0.0) == 8  # 0.85 * 600 s / 60 s


def test_in_the_window_a_few_cards_left_still_fit_and_keep_the_pass() -> None:
    values = {f"c{i:03}": 1.0 for i in range(30)}
    known = {cid: review_row(cid, DAY - timedelta(days=12), DAY + timedelta(days=20))
             for cid in list(values)[:29]}  # fmt: skip
    plan = deadline(values, minutes_per_day=45)
    now = at(DAY - timedelta(days=2))  # in the window, past the last introduction day
    assert fitted_to_budget(plan, known, now, HOUR, BERLIN) is plan  # one card: all at once


def test_in_the_window_cards_the_pass_leaves_no_room_for_give_the_pass_up() -> None:
    values = {f"c{i:03}": 1.0 for i in range(220)}
    # 200 cards for the final pass (a run a day, and yesterday's still due) and 20 never seen:
    # the estimate says 20 fit today, but the pass fills today's budget
    known = {cid: review_row(cid, DAY - timedelta(days=12), DAY + timedelta(days=20))
             for cid in list(values)[:200]}  # fmt: skip
    plan = deadline(values, minutes_per_day=45)
    now = at(DAY - timedelta(days=2))  # in the window, past the last introduction day
    unintroduced = list(values)[200:]
    assert coverage(plan, now.date(), unintroduced, 200).covered  # the estimate
    fitted = fitted_to_budget(plan, known, now, HOUR, BERLIN)
    assert fitted.final_pass_days == 0  # new cards to the eve instead
    assert day_quota(planned_schedules(known, fitted, now, HOUR, BERLIN), fitted, now, HOUR,
                     BERLIN) == 20  # fmt: skip


def test_a_due_review_costs_its_relearning_too() -> None:
    values = {f"c{i:03}": 1.0 for i in range(100)}
    due_today = {cid: review_row(cid, DAY - timedelta(days=25), DAY - timedelta(days=20))
                 for cid in list(values)[:30]}  # fmt: skip
    plan = deadline(values, minutes_per_day=20, seconds_per_review=20.0)
    now = at(DAY - timedelta(days=20))
    # 30 due reviews cost 30 * 1.25 answers of 20 s = 750 s of the 1020 s planned share
    assert REVIEW_ANSWERS == 1.25
    assert day_quota(due_today, plan, now, HOUR, BERLIN) == 4  # 270 s / 60 s


def test_plan_coverage_says_what_the_plan_does_when_short() -> None:
    values = {f"c{i:03}": 1.0 for i in range(200)}
    today = DAY - timedelta(days=10)
    tight = deadline(values, minutes_per_day=10)
    with_pass = coverage(tight, today, list(values))
    short = plan_coverage(tight, today, list(values))
    assert not with_pass.covered and with_pass.final_pass
    assert not short.final_pass  # new cards up to the eve, no final pass
    assert short.last_introduction_day == DAY - timedelta(days=1)
    assert short.introduced > with_pass.introduced
    roomy = deadline(values, minutes_per_day=600)
    assert plan_coverage(roomy, today, list(values)) == coverage(roomy, today, list(values))

"""The today queue (drill.plan.today): due reviews and new cards by the due counts' rule, one lab
to predict where predictions are weakest, one unsolved exercise from the role's most valuable
decks, and the mock round on its planned days, under a fixed clock over a real database written
through the app's own repositories."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from drill.decks.loader import DeckSet, load_decks
from drill.decks.roles import Role, RoleTable
from drill.plan.today import (
    DEFAULT_ANSWER_S,
    EXERCISE,
    LAB,
    LAB_MINUTES,
    MOCK,
    NEW,
    REVIEWS,
    TodayItem,
    days_left,
    mock_minutes,
    next_item,
    today_queue,
)
from drill.review.deadline import NEW_CARD_ANSWERS
from drill.review.due import FirstPaint, first_paint
from drill.review.scheduler import rate_card
from drill.runs.recorder import finish_run, start_run
from drill.settings import Settings
from drill.times import learner_date
from storage.db import Database, open_database
from storage.snapshot import PlanRow

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TODAY = learner_date(NOW)
SETTINGS = Settings()

PREDICT = """
    lab: {run: resume}
    predict:
      ask: After a weights-only resume the loss is ...
      choices:
        - {text: about the same, when: "loss_jump_ratio < 1.2"}
        - {text: clearly higher, when: "loss_jump_ratio >= 2"}
"""
ALPHA = f"""\
deck: alpha
title: Alpha
cards:
  - id: a1
    level: easy
    front: Q a1
    back: A{PREDICT}
  - id: a2
    level: easy
    front: Q a2
    back: A{PREDICT}
  - id: a3
    level: easy
    front: Q a3
    back: A
    exercise: first-nan
  - id: a4
    level: easy
    front: Q a4
    back: A
"""
BETA = """\
deck: beta
title: Beta
cards:
  - id: b1
    level: easy
    front: Q b1
    back: A
    exercise: ddp-by-hand
  - id: b2
    level: easy
    front: Q b2
    back: A
"""
ROLE = Role(
    name="infra",
    title="Infra",
    deck_weights={"beta": 3.0},
    tag_weights={},
    default_weight=1.0,
    mock_days_before=(7, 4, 2),
)
ROLES = RoleTable(roles={"infra": ROLE}, areas={})


def plan_for(days: int) -> PlanRow:
    return PlanRow(TODAY + timedelta(days=days), "infra", 45, 0.9, NOW - timedelta(days=1))


@pytest.fixture
def decks(tmp_path: Path) -> DeckSet:
    folder = tmp_path / "decks"
    folder.mkdir()
    (folder / "alpha.yaml").write_text(ALPHA)
    (folder / "beta.yaml").write_text(BETA)
    return load_decks([folder], include_bundled=False)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "drill.sqlite3")
    yield database
    database.close()


def rate(
    decks: DeckSet, db: Database, card_id: str, rating: int, at: datetime, duration_ms: int = 0
) -> None:
    card = decks.card(card_id)
    assert card is not None
    rate_card(db, card_id, decks.deck_of(card_id), rating, content_hash=card.content_hash(),
              now=at, settings=SETTINGS, duration_ms=duration_ms)  # fmt: skip


def read(decks: DeckSet, db: Database, now: datetime = NOW) -> FirstPaint:
    found = first_paint(index=decks.index, db_path=db.path, now=now, settings=SETTINGS)
    assert found is not None
    return found


def predict(db: Database, card_id: str, right: bool | None, at: datetime) -> None:
    run = start_run(db, "lab", "resume", {}, 2, "/tmp/run", at, card_id=card_id,
                    deck_id="alpha", predicted="clearly higher", certainty="high")  # fmt: skip
    finish_run(db, run, "ok", 1.0, {}, at=at, prediction_right=right)


def by_kind(items: list[TodayItem]) -> dict[str, TodayItem]:
    return {item.kind: item for item in items}


def test_reviews_and_new_cards_take_the_due_counts_and_measured_minutes(
    decks: DeckSet, db: Database
) -> None:
    rate(decks, db, "a4", 3, NOW - timedelta(days=3))  # introduced before today
    rate(decks, db, "a4", 3, NOW - timedelta(minutes=30))  # and reviewed today: done
    rate(decks, db, "b2", 1, NOW - timedelta(hours=1))  # introduced today, Again: due now
    first = read(decks, db)
    assert first.totals["due"] == 1 and first.totals["new"] == 4  # the due counts' numbers

    items = today_queue(first, NOW, SETTINGS, typical_answer_s=30.0, db=db, roles=ROLES)

    assert [item.kind for item in items] == [REVIEWS, NEW, LAB, EXERCISE]  # no plan: no mock
    reviews, new = items[0], items[1]
    assert (reviews.done, reviews.total, reviews.minutes) == (1, 2, 0.5)
    assert (new.done, new.total) == (1, 5)  # b2 introduced today, 4 to go
    assert new.minutes == 4 * NEW_CARD_ANSWERS * 30.0 / 60  # a few answers each on day one
    assert next_item(items) is reviews


def test_review_minutes_use_each_cards_own_measured_answer_time(
    decks: DeckSet, db: Database
) -> None:
    rate(decks, db, "b2", 1, NOW - timedelta(hours=1), duration_ms=90_000)  # slow: 90 s
    rate(decks, db, "a4", 1, NOW - timedelta(hours=1))  # untimed: the typical 30 s
    first = read(decks, db)
    assert first.totals["due"] == 2
    reviews = today_queue(first, NOW, SETTINGS, typical_answer_s=30.0, db=db, roles=ROLES)[0]
    assert reviews.minutes == (90.0 + 30.0) / 60
    # before the database is open (first paint): the typical time for each
    light = today_queue(first, NOW, SETTINGS, typical_answer_s=30.0, roles=ROLES)[0]
    assert light.minutes == 2 * 30.0 / 60


def test_minutes_fall_back_to_the_default_answer_time(decks: DeckSet, db: Database) -> None:
    items = today_queue(read(decks, db), NOW, SETTINGS, roles=ROLES)
    new = by_kind(items)[NEW]
    assert (new.total, new.minutes) == (6, 6 * NEW_CARD_ANSWERS * DEFAULT_ANSWER_S / 60)
    assert [item.kind for item in items] == [REVIEWS, NEW]  # no database yet: no lab, exercise


def test_the_lab_is_where_predictions_are_weakest(decks: DeckSet, db: Database) -> None:
    first = read(decks, db)
    lab = by_kind(today_queue(first, NOW, SETTINGS, db=db))[LAB]
    assert (lab.target, lab.done, lab.total, lab.minutes) == ("a1", 0, 1, LAB_MINUTES)

    earlier = NOW - timedelta(days=2)
    predict(db, "a1", True, earlier)
    lab = by_kind(today_queue(first, NOW, SETTINGS, db=db))[LAB]
    assert lab.target == "a2"  # never predicted: weakest

    predict(db, "a2", True, earlier)
    predict(db, "a1", False, earlier)
    lab = by_kind(today_queue(first, NOW, SETTINGS, db=db))[LAB]
    assert lab.target == "a1" and "resume" in lab.label  # 1 of 2 right against 1 of 1

    predict(db, "a2", None, NOW - timedelta(minutes=5))  # predicted today (still running)
    lab = by_kind(today_queue(first, NOW, SETTINGS, db=db))[LAB]
    assert (lab.target, lab.done, lab.total, lab.finished) == ("a2", 1, 1, True)


def test_the_exercise_comes_from_the_roles_most_valuable_deck(decks: DeckSet, db: Database) -> None:
    first = read(decks, db)
    plain = by_kind(today_queue(first, NOW, SETTINGS, db=db))[EXERCISE]
    assert plain.target == "first-nan"  # without a plan: deck order (alpha links it)

    planned = today_queue(first, NOW, SETTINGS, plan=plan_for(10), db=db, roles=ROLES)
    assert by_kind(planned)[EXERCISE].target == "ddp-by-hand"  # beta weighs 3.0

    db.exercises.checked("ddp-by-hand", "ok", NOW - timedelta(days=1))  # solved before today
    planned = today_queue(first, NOW, SETTINGS, plan=plan_for(10), db=db, roles=ROLES)
    assert by_kind(planned)[EXERCISE].target == "first-nan"

    db.exercises.checked("first-nan", "ok", NOW - timedelta(minutes=1))  # solved today
    item = by_kind(today_queue(first, NOW, SETTINGS, db=db))[EXERCISE]
    assert (item.target, item.done, item.total) == ("first-nan", 1, 1)


@pytest.mark.parametrize(
    ("days", "shown"), [(7, True), (6, False), (4, True), (2, True), (1, False)]
)
def test_the_mock_round_only_on_its_planned_days(
    decks: DeckSet, db: Database, days: int, shown: bool
) -> None:
    items = today_queue(read(decks, db), NOW, SETTINGS, plan=plan_for(days), db=db, roles=ROLES)
    mock = by_kind(items).get(MOCK)
    assert (mock is not None) == shown
    if mock is not None:
        assert items[-1] is mock and (mock.done, mock.total) == (0, 1)
        assert mock.minutes == mock_minutes() == 55
        assert f"{days} days before" in mock.label


def test_a_round_graded_today_marks_the_mock_done(decks: DeckSet, db: Database) -> None:
    run = start_run(db, "coding", "mock-coding", {}, 2, "/tmp/r", NOW - timedelta(hours=1))
    finish_run(db, run, "ok", 60.0, {}, at=NOW)
    items = today_queue(read(decks, db), NOW, SETTINGS, plan=plan_for(4), db=db, roles=ROLES)
    mock = by_kind(items)[MOCK]
    assert (mock.done, mock.minutes) == (1, 0.0)
    assert next_item(items) is not mock


def test_a_role_the_table_lacks_gives_no_mock_and_days_left_counts_learner_days(
    decks: DeckSet, db: Database
) -> None:
    plan = replace(plan_for(7), role="gone")
    items = today_queue(read(decks, db), NOW, SETTINGS, plan=plan, db=db, roles=ROLES)
    assert MOCK not in by_kind(items)
    assert days_left(plan_for(7), NOW, SETTINGS.day_start_hour) == 7
    assert days_left(plan_for(7), NOW + timedelta(days=1), SETTINGS.day_start_hour) == 6


def test_with_a_plan_in_force_the_new_cards_are_the_plans_quota(
    decks: DeckSet, db: Database
) -> None:
    db.plans.record(TODAY + timedelta(days=10), "training-infra", 45, 0.9, NOW - timedelta(days=1))
    first = read(decks, db)
    assert first.plan is not None and first.deadline is not None
    items = today_queue(first, NOW, SETTINGS, plan=first.plan, db=db)
    new = by_kind(items)[NEW]
    assert new.label == "New cards by the plan" and new.total == first.totals["new"]
    assert MOCK not in by_kind(items)  # 10 days out: no round (training-infra: 7, 4, 2)


def test_the_lab_and_exercise_count_against_the_plans_budget(decks: DeckSet, db: Database) -> None:
    plan = plan_for(10)  # 45 minutes a day
    fresh = today_queue(read(decks, db), NOW, SETTINGS, plan=plan, db=db, roles=ROLES)
    assert not any(item.over_budget for item in fresh)  # 45 minutes hold everything
    assert sum(item.minutes for item in fresh) <= plan.minutes_per_day
    for card_id in ("a1", "a2", "a4", "b2"):  # 4 answers of 150 s this morning (Easy: done)
        rate(decks, db, card_id, 4, NOW - timedelta(hours=2), duration_ms=150_000)
    first = read(decks, db)
    assert first.spent_today_s == 4 * 150.0
    items = by_kind(today_queue(first, NOW, SETTINGS, plan=plan, db=db, roles=ROLES))
    cards = items[REVIEWS].minutes + items[NEW].minutes
    left = plan.minutes_per_day - 10 - cards  # 10 minutes spent
    assert items[LAB].minutes <= left < items[LAB].minutes + items[EXERCISE].minutes
    assert left + 10 >= items[LAB].minutes + items[EXERCISE].minutes  # both, but for the 10
    assert not items[LAB].over_budget  # the lab fits what is left
    assert items[EXERCISE].over_budget  # the exercise does not: it says so
    assert items[EXERCISE].label.endswith(" · over today's budget")

"""The interview profile (drill.plan.profile) with a fixed clock: what a profile may hold, every
change recorded and shown, where the plan stands (days left, cards to introduce, whether the
budget covers them) and what `drill plan` says without a plan or with a damaged row."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from drill.decks.index import DeckIndex
from drill.decks.loader import load_decks
from drill.decks.roles import RoleTable, load_roles
from drill.errors import DrillError
from drill.plan.profile import (
    DEFAULT_TARGET,
    MAX_DAYS_AHEAD,
    PlanView,
    clear_profile,
    describe_profile,
    parse_day,
    plan_view,
    set_profile,
    validate_profile,
)
from drill.settings import Settings
from storage.db import Database, open_database

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)  # learner day 2026-03-02 (UTC, day starts 04:00)
TODAY = date(2026, 3, 2)
SETTINGS = Settings()


def _deck(deck_id: str, count: int) -> str:
    cards = "".join(
        f"  - id: {deck_id}-{n}\n    level: easy\n    front: Q{n}?\n    back: A{n}.\n"
        for n in range(count)
    )
    return f"deck: {deck_id}\ntitle: {deck_id.title()}\ncards:\n{cards}"


@pytest.fixture
def index(tmp_path: Path) -> DeckIndex:
    folder = tmp_path / "decks"
    folder.mkdir()
    (folder / "core.yaml").write_text(_deck("core", 30))
    (folder / "extra.yaml").write_text(_deck("extra", 30))
    decks = load_decks([folder], include_bundled=False, use_cache=False)
    assert decks.index is not None and not decks.problems
    return decks.index


@pytest.fixture
def roles(tmp_path: Path) -> RoleTable:
    path = tmp_path / "roles.toml"
    path.write_text(
        '[roles.infra]\ntitle = "Infra engineer"\n[roles.infra.decks]\ncore = 3.0\nextra = 0.5\n'
        '[roles.bio]\ntitle = "Bio engineer"\n[roles.bio.decks]\nextra = 3.0\n'
    )
    return load_roles(path)


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = open_database(tmp_path / "drill.sqlite3")
    yield database  # type: ignore[misc]
    database.close()


@pytest.mark.parametrize(
    ("day", "role", "minutes", "says"),
    [
        (
            TODAY - timedelta(days=1),
            "infra",
            45,
            "the interview date 2026-03-01 is in the past (today is 2026-03-02)",
        ),
        (TODAY, "infra", 45, "the interview date 2026-03-02 is today: choose a day after today"),
        (
            TODAY + timedelta(days=MAX_DAYS_AHEAD + 1),
            "infra",
            45,
            "the interview date 2027-03-03 is more than a year out (at most 2027-03-02, 365 days)",
        ),
        (TODAY + timedelta(days=10), "ops", 45, "unknown role 'ops' (known: infra, bio)"),
        (TODAY + timedelta(days=10), "infra", 4, "minutes per day 4 is outside 5..600"),
        (TODAY + timedelta(days=10), "infra", 601, "minutes per day 601 is outside 5..600"),
    ],
)
def test_a_profile_out_of_bounds_is_one_line(
    roles: RoleTable, day: date, role: str, minutes: int, says: str
) -> None:
    with pytest.raises(DrillError) as caught:
        validate_profile(day, role, minutes, TODAY, roles)
    assert str(caught.value) == says


@pytest.mark.parametrize(("days", "minutes"), [(1, 45), (MAX_DAYS_AHEAD, 45), (10, 5), (10, 600)])
def test_the_bounds_themselves_are_allowed(roles: RoleTable, days: int, minutes: int) -> None:
    validate_profile(TODAY + timedelta(days=days), "infra", minutes, TODAY, roles)


@pytest.mark.parametrize("text", ["2026-3-9", "2026-02-30", "tomorrow", "", "2026-03-09T10:00"])
def test_a_malformed_date_is_one_line(text: str) -> None:
    with pytest.raises(DrillError) as caught:
        parse_day(text)
    assert str(caught.value).endswith("is not a date (YYYY-MM-DD)")
    assert parse_day("2026-03-09") == date(2026, 3, 9)


def test_before_the_day_start_hour_today_is_still_yesterday(db: Database, roles: RoleTable) -> None:
    night = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)  # before 04:00: learner day 2026-03-01
    plan = set_profile(db, TODAY, "infra", 45, night, SETTINGS, roles, tz=UTC)
    assert plan.interview_day == TODAY
    with pytest.raises(DrillError, match="is today"):
        set_profile(db, TODAY, "infra", 45, NOW, SETTINGS, roles, tz=UTC)


def test_every_change_is_kept_and_the_newest_is_in_force(
    db: Database, roles: RoleTable, index: DeckIndex
) -> None:
    first = set_profile(db, TODAY + timedelta(days=10), "infra", 45, NOW, SETTINGS, roles, tz=UTC)
    assert first.target_recall == DEFAULT_TARGET
    later = NOW + timedelta(days=2)
    second = set_profile(db, TODAY + timedelta(days=14), "bio", 60, later, SETTINGS, roles, tz=UTC)
    with pytest.raises(DrillError):  # a refused change writes nothing
        set_profile(db, TODAY, "bio", 60, later, SETTINGS, roles, tz=UTC)

    view = plan_view(db, index, SETTINGS, later, roles, tz=UTC)
    assert view.plan == second and view.role_title == "Bio engineer"
    assert view.days_left == 12
    assert view.history == [(first, False), (second, False)]
    lines = describe_profile(view, roles)
    assert lines[0] == "Interview 2026-03-16 (in 12 days)"
    assert "role: bio (Bio engineer)" in lines
    assert lines[-3:] == [
        "changes:",
        f"  {first.created_at.astimezone():%Y-%m-%d %H:%M}  2026-03-12 · infra · 45 min/day",
        f"  {second.created_at.astimezone():%Y-%m-%d %H:%M}  2026-03-16 · bio · 60 min/day",
    ]

    assert clear_profile(db, later + timedelta(hours=1)) is True
    assert clear_profile(db, later + timedelta(hours=2)) is False
    cleared = plan_view(db, index, SETTINGS, later, roles, tz=UTC)
    assert cleared.plan is None and cleared.coverage is None
    assert [ended for _, ended in cleared.history] == [False, False, True]
    text = describe_profile(cleared, roles)
    assert text[0] == (
        "No interview plan. Make one: drill plan --date YYYY-MM-DD --role ROLE [--minutes N] "
        "(roles: infra, bio)."
    )
    assert text[-1].endswith("  cleared")


def test_without_any_plan_it_says_how_to_make_one(
    db: Database, roles: RoleTable, index: DeckIndex
) -> None:
    view = plan_view(db, index, SETTINGS, NOW, roles, tz=UTC)
    assert (view.plan, view.history, view.cards, view.introduced) == (None, [], 60, 0)
    assert describe_profile(view, roles) == [
        "No interview plan. Make one: drill plan --date YYYY-MM-DD --role ROLE [--minutes N] "
        "(roles: infra, bio)."
    ]
    assert view.as_json()["plan"] is None and view.as_json()["to_introduce"] == 60


def test_a_budget_that_covers_every_card_says_so(
    db: Database, roles: RoleTable, index: DeckIndex
) -> None:
    set_profile(db, TODAY + timedelta(days=10), "infra", 120, NOW, SETTINGS, roles, tz=UTC)
    view = plan_view(db, index, SETTINGS, NOW, roles, tz=UTC)
    assert view.coverage is not None and view.coverage.covered
    assert view.coverage.cards == 60
    assert "coverage: the budget introduces every card by 2026-03-08" in describe_profile(view)


def test_a_small_budget_says_what_it_leaves_out_lowest_value_first(
    db: Database, roles: RoleTable, index: DeckIndex
) -> None:
    set_profile(db, TODAY + timedelta(days=7), "infra", 5, NOW, SETTINGS, roles, tz=UTC)
    view = plan_view(db, index, SETTINGS, NOW, roles, tz=UTC)
    cover = view.coverage
    assert cover is not None and not cover.covered and cover.left_out > 0
    assert cover.left_out_decks[0] == "extra"  # infra weights extra lowest
    (line,) = [line for line in describe_profile(view) if line.startswith("coverage:")]
    assert f"{cover.left_out} left out (from extra" in line
    data = view.as_json()
    assert data["coverage"]["left_out"] == cover.left_out and data["coverage"]["covered"] is False


def test_introduced_and_suspended_cards_are_counted_apart(
    db: Database, roles: RoleTable, index: DeckIndex
) -> None:
    conn = sqlite3.connect(db.path)
    with conn:
        conn.execute(
            "INSERT INTO card_state (card_id, deck_id, state, step, stability, difficulty, due, "
            "last_review, reps, lapses, suspended, introduced_at, leech) VALUES ('core-0', "
            "'core', 2, NULL, 3.0, 5.0, '2026-03-04 12:00:00.000000', "
            "'2026-03-01 12:00:00.000000', 1, 0, 0, '2026-03-01 12:00:00.000000', 0)"
        )
        conn.execute(
            "INSERT INTO card_state (card_id, deck_id, reps, lapses, suspended, leech) "
            "VALUES ('core-1', 'core', 0, 0, 1, 0)"
        )
    conn.close()
    view = plan_view(db, index, SETTINGS, NOW, roles, tz=UTC)
    assert (view.cards, view.introduced) == (59, 1)


def test_after_the_date_the_plan_says_scheduling_is_plain_fsrs(
    db: Database, roles: RoleTable, index: DeckIndex
) -> None:
    set_profile(db, TODAY + timedelta(days=3), "infra", 45, NOW, SETTINGS, roles, tz=UTC)
    view = plan_view(db, index, SETTINGS, NOW + timedelta(days=5), roles, tz=UTC)
    assert view.days_left == -2 and view.coverage is None
    assert describe_profile(view)[0] == (
        "Interview 2026-03-05 (2 days ago: plain FSRS again (drill plan --clear))"
    )


def test_a_damaged_newest_row_is_not_in_force_and_is_said(
    db: Database, roles: RoleTable, index: DeckIndex
) -> None:
    set_profile(db, TODAY + timedelta(days=3), "infra", 45, NOW, SETTINGS, roles, tz=UTC)
    conn = sqlite3.connect(db.path)
    with conn:
        conn.execute("UPDATE interview_plan SET minutes_per_day = 99999")
    conn.close()
    view = plan_view(db, index, SETTINGS, NOW, roles, tz=UTC)
    assert view.plan is None and view.notice is not None
    lines = describe_profile(view, roles)
    assert lines[0] == view.notice and "minutes_per_day 99999 is outside 1..1440" in lines[0]
    assert lines[1].startswith("No interview plan.")


def test_the_json_is_plain_data(db: Database, roles: RoleTable, index: DeckIndex) -> None:
    plan = set_profile(db, TODAY + timedelta(days=10), "infra", 45, NOW, SETTINGS, roles, tz=UTC)
    data = plan_view(db, index, SETTINGS, NOW, roles, tz=UTC).as_json()
    assert data["plan"] == {
        "interview_day": "2026-03-12", "role": "infra", "minutes_per_day": 45,
        "target_recall": 0.9, "created_at": plan.created_at.isoformat(), "title": "Infra engineer",
    }  # fmt: skip
    assert data["days_left"] == 10 and data["today"] == "2026-03-02"
    stored = {key: value for key, value in data["plan"].items() if key != "title"}
    assert data["history"] == [stored | {"ended": False}]
    assert PlanView(TODAY, None).as_json()["history"] == []

"""LabRunService without a screen: the form, a run from start to history, rating through the
review session or the scheduler, and database failures returned as notices."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

import storage.db
from drill.decks.loader import load_decks
from drill.decks.models import Card
from drill.labs.runs import LabRuns
from drill.labs.service import NO_DATABASE, FormError, LabRunService, UnknownLab
from drill.paths import database_path
from drill.review.scheduler import rate_card
from drill.review.session import ReviewSession
from tests.support.db_damage import corrupt_middle
from tests.support.lab_fakes import CARD_YAML, NOW, FakeRunner
from tests.support.lab_screens import seen_long_ago


def service(card: Card | None, db: Any, runner: FakeRunner, tmp_path: Path, **kw: Any):
    ticks = itertools.count()
    return LabRunService(
        card, "d", db=db, runner=runner, runs_root=tmp_path / "runs",
        clock=lambda: float(next(ticks)), now=lambda: NOW, **kw,
    )  # fmt: skip


def seen_and_due(db: Any, card: Card) -> None:
    seen_long_ago(db, card, "d", NOW)


def rated_now(db: Any) -> list[tuple[str, int]]:
    return [(r.card_id, r.rating) for r in db.review.reviews()][1:]  # after seen_and_due's


def finish(svc: LabRunService, runner: FakeRunner) -> None:
    runner.release.set()
    assert svc.controller is not None and svc.controller.wait(10)


def test_form_fields_and_refusals(card: Card, tmp_path: Path) -> None:
    svc = service(card, None, FakeRunner(), tmp_path)
    assert svc.name == "ddp-baseline" and svc.initial_world() == 2 and svc.predicts
    fields = {f.name: f for f in svc.fields()}
    assert fields["steps"].text == "4"  # the card's value, not the lab's default
    texts = [f.text for f in svc.fields()]
    refusals = [
        (("two", texts, 0, 2), "world size: 'two' is not a whole number"),
        (("1", texts, 0, 2), "world size 1 is out of range"),
        (("2", ["0", *texts[1:]], 0, 2), "param steps: 0 is not a valid int in [1, 200]"),
        (("2", texts, -1, 2), "pick your prediction and how sure you are"),
        (("2", texts, 0, None), "pick your prediction and how sure you are"),
    ]
    for args, message in refusals:
        with pytest.raises(FormError) as refused:
            svc.parse(*args)
        assert message in str(refused.value)
    request = svc.parse(" 2 ", texts, 1, 0)
    assert request.world_size == 2 and request.params["steps"] == 4
    assert request.prediction is not None and request.prediction.certainty == "low"
    assert svc.predicted_text(request.prediction) == "slightly different"
    assert request.describe().startswith("W=2 steps=4 grad_sync=ddp")


def test_no_card_needs_no_prediction_and_cannot_rate(tmp_path: Path) -> None:
    svc = service(None, None, FakeRunner(), tmp_path, lab="sampler")
    assert not svc.predicts
    request = svc.parse(str(svc.initial_world()), [f.text for f in svc.fields()])
    assert request.prediction is None
    assert svc.rate(3).notice == "Nothing to rate."


def test_unknown_lab_is_a_drill_error(card: Card, tmp_path: Path) -> None:
    with pytest.raises(UnknownLab, match="unknown lab 'no-such-lab'"):
        service(card, None, FakeRunner(), tmp_path, lab="no-such-lab")


def test_run_records_scores_and_rates_through_the_scheduler(
    card: Card, db: Any, tmp_path: Path
) -> None:
    seen_and_due(db, card)
    runner = FakeRunner()
    svc = service(card, db, runner, tmp_path)
    assert svc.progress() is None and svc.past_runs().value == []
    started = svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
    assert started.ok and svc.run_id is not None
    assert LabRuns(db).get(svc.run_id).status == "running"  # type: ignore[union-attr]
    assert runner.emitted.wait(10)
    progress = svc.progress()
    assert progress is not None and progress.running and progress.step == 4
    assert any("step 4" in line for line in progress.lines)
    assert not svc.can_rate
    finish(svc, runner)
    progress = svc.progress()
    assert progress is not None and progress.finished and progress.status == "ok"
    outcome = svc.outcome
    assert outcome is not None and outcome.right is True and outcome.suggested_rating == 4
    assert svc.can_rate and svc.finish_notice is None
    saved = svc.rate(4)
    assert saved.ok and saved.value == 4 and svc.rated == 4 and not svc.can_rate
    assert rated_now(db) == [(card.id, 4)]
    assert svc.change is not None and svc.change.describe().startswith(f"{card.id}: Easy, due in")
    [record] = LabRuns(db).runs(card_id=card.id)
    assert (record.status, record.rating, record.predicted) == ("ok", 4, "bit-identical")
    assert svc.past_runs().value == []  # this run is left out of its own past runs


def test_rating_goes_through_the_session_that_shows_the_card(
    card: Card, db: Any, tmp_path: Path
) -> None:
    decks_dir = tmp_path / "decks"
    decks_dir.mkdir()
    deck = {"deck": "d", "title": "D", "cards": [yaml.safe_load(CARD_YAML)]}
    (decks_dir / "d.yaml").write_text(yaml.safe_dump(deck))
    session = ReviewSession(load_decks([decks_dir], include_bundled=False), db, now=lambda: NOW)
    assert session.current is not None and session.current.card.id == card.id
    runner = FakeRunner()
    svc = service(card, db, runner, tmp_path, session=session)
    svc.start(svc.parse("2", [f.text for f in svc.fields()], 1, 1))
    finish(svc, runner)
    assert svc.outcome is not None and svc.outcome.suggested_rating == 1  # wrong, medium
    assert svc.rate(2).ok
    assert session.stats.reviewed == 1 and session.stats.again == 0
    assert [(r.card_id, r.rating) for r in db.review.reviews()] == [(card.id, 2)]


def test_the_lab_rates_its_own_card_when_the_session_shows_another(
    card: Card, db: Any, tmp_path: Path
) -> None:
    """The lab's card queued behind the card on screen: never the card on screen rated; the
    lab's card, new, is not rated from outside review (issue 34) and stays in the session."""
    decks_dir = tmp_path / "decks"
    decks_dir.mkdir()
    first = {"id": "aa-first", "level": "easy", "front": "First?", "back": "Yes."}
    deck = {"deck": "d", "title": "D", "cards": [first, yaml.safe_load(CARD_YAML)]}
    (decks_dir / "d.yaml").write_text(yaml.safe_dump(deck))
    session = ReviewSession(load_decks([decks_dir], include_bundled=False), db, now=lambda: NOW)
    assert session.current is not None and session.current.card.id == "aa-first"
    runner = FakeRunner()
    svc = service(card, db, runner, tmp_path, session=session)
    svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
    finish(svc, runner)
    assert svc.rate(4).ok
    assert db.review.reviews() == []
    assert svc.change is not None and svc.change.describe() == f"{card.id}: new, not rated"
    assert session.current.card.id == "aa-first" and session.remaining == 2


def test_without_a_database_the_rating_is_refused(card: Card, tmp_path: Path) -> None:
    runner = FakeRunner()
    svc = service(card, None, runner, tmp_path)
    assert svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 0)).ok
    finish(svc, runner)
    assert svc.rate(3).notice == NO_DATABASE and svc.rated is None and svc.can_rate


@pytest.fixture
def locked_db(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A database whose busy timeout is short; `lock()` makes another writer hold it."""
    monkeypatch.setattr(storage.db, "BUSY_TIMEOUT_MS", 50)
    db = storage.db.open_database(database_path())
    yield db
    db.close()


def hold_write_lock(path: Path) -> sqlite3.Connection:
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another copy of drill is writing
    return other


def test_locked_database_gives_notices_and_the_run_still_works(
    card: Card, locked_db: Any, tmp_path: Path
) -> None:
    seen_and_due(locked_db, card)
    runner = FakeRunner()
    svc = service(card, locked_db, runner, tmp_path)
    other = hold_write_lock(locked_db.path)
    try:
        started = svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
        assert started.notice is not None and "database is locked" in started.notice
        assert started.notice.endswith("(the run is not kept in the history)")
        assert svc.run_id is None and svc.controller is not None  # it runs all the same
        finish(svc, runner)
        assert svc.outcome is not None and svc.outcome.status == "ok"
        refused = svc.rate(4)
        assert refused.notice is not None and refused.notice.startswith("Not saved: ")
        assert refused.notice.endswith("Try again.") and svc.rated is None and svc.can_rate
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert svc.rate(4).ok  # the lock is gone: the retry is saved
    assert rated_now(locked_db) == [(card.id, 4)]


def test_recording_the_end_fails_as_a_notice(card: Card, locked_db: Any, tmp_path: Path) -> None:
    runner = FakeRunner()
    svc = service(card, locked_db, runner, tmp_path)
    assert svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2)).ok
    assert runner.emitted.wait(10)
    other = hold_write_lock(locked_db.path)
    try:
        finish(svc, runner)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert svc.finish_notice is not None and "database is locked" in svc.finish_notice
    assert svc.outcome is not None and svc.outcome.status == "ok"


def test_damaged_database_past_runs_is_a_notice(card: Card, db: Any, tmp_path: Path) -> None:
    svc = service(card, db, FakeRunner(), tmp_path)
    corrupt_middle(db.path)
    db.close()  # drop pooled connections and their page cache
    found = svc.past_runs()
    assert found.value == [] and found.notice is not None and "malformed" in found.notice


def test_wait_stopped_cancels_and_records(card: Card, db: Any, tmp_path: Path) -> None:
    runner = FakeRunner()
    svc = service(card, db, runner, tmp_path)
    svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
    assert runner.emitted.wait(10)
    assert asyncio.run(svc.wait_stopped(10))
    assert svc.finished and svc.outcome is not None and svc.outcome.status == "cancelled"
    [record] = LabRuns(db).runs(card_id=card.id)
    assert record.status == "cancelled" and record.rating is None


@pytest.mark.parametrize("through_session", [True, False])
def test_a_rating_logs_the_time_from_the_cards_display(
    card: Card, db: Any, tmp_path: Path, through_session: bool
) -> None:
    decks_dir = tmp_path / "decks"
    decks_dir.mkdir()
    deck = {"deck": "d", "title": "D", "cards": [yaml.safe_load(CARD_YAML)]}
    (decks_dir / "d.yaml").write_text(yaml.safe_dump(deck))
    session = ReviewSession(load_decks([decks_dir], include_bundled=False), db, now=lambda: NOW)
    if not through_session:  # from the labs list: only a card seen before is rated
        seen_and_due(db, card)
    reading = [130.0]
    runner = FakeRunner()
    svc = LabRunService(
        card, "d", db=db, runner=runner, runs_root=tmp_path / "runs", now=lambda: NOW,
        clock=lambda: reading[0], shown_at=100.0,
        session=session if through_session else None,
    )  # fmt: skip
    svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
    finish(svc, runner)
    reading[0] = 212.5  # the rating comes 112.5 s after the card was shown
    assert svc.rate(3).ok
    assert [(r.card_id, r.duration_ms) for r in db.review.reviews()][-1] == (card.id, 112_500)


def test_a_rating_outside_review_that_makes_a_leech_says_so(
    card: Card, db: Any, tmp_path: Path
) -> None:
    """A lab opened from the labs list rates without a review session: the leech its rating
    makes is named by the service (the panel shows it), not lost."""
    from datetime import timedelta

    from drill.review.scheduler import rate_card

    moment = NOW - timedelta(days=20_000)
    for _ in range(7):  # seven lapses: one short of the default threshold of 8
        for rating in (4, 1):
            moment += timedelta(days=1_000)
            rate_card(db, card.id, "d", rating, content_hash=card.content_hash(), now=moment)
    rate_card(db, card.id, "d", 4, content_hash=card.content_hash(), now=moment + timedelta(1))
    runner = FakeRunner()
    svc = service(card, db, runner, tmp_path)
    svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
    finish(svc, runner)
    assert svc.rate(1).ok
    assert svc.leech_notice == f"Leech: {card.id} lapsed 8 times, suspended"


def test_a_rating_that_makes_no_leech_names_none(card: Card, db: Any, tmp_path: Path) -> None:
    runner = FakeRunner()
    svc = service(card, db, runner, tmp_path)
    svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
    finish(svc, runner)
    assert svc.rate(1).ok and svc.leech_notice is None


@pytest.mark.parametrize(
    ("days_since", "expected"),
    [(None, "new, not rated"), (0, "not due, logged only"), (60, "Again, due in 10 min")],
)
def test_a_rating_from_the_labs_list_follows_the_rule_for_ratings_outside_review(
    card: Card, db: Any, tmp_path: Path, days_since: int | None, expected: str
) -> None:
    """issue 34: a new card is not rated, a card not due is logged only, a due one rated."""
    if days_since is not None:  # Easy: due days after that review
        rate_card(db, card.id, "d", 4, content_hash=card.content_hash(),
                  now=NOW - timedelta(days=days_since))  # fmt: skip
    before = db.review.card_state(card.id)
    runner = FakeRunner()
    svc = service(card, db, runner, tmp_path)
    svc.start(svc.parse("2", [f.text for f in svc.fields()], 0, 2))
    finish(svc, runner)
    assert svc.rate(1).ok
    assert svc.change is not None and svc.change.describe() == f"{card.id}: {expected}"
    after = db.review.card_state(card.id)
    if days_since != 60:
        assert after == before  # new: nothing written; not due: the schedule kept

"""ReviewSession against a real SQLite file: rate, undo, bury, suspend, learn-ahead, edits."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.paths import database_path
from drill.review.due import first_paint
from drill.review.queue import next_day_start
from drill.review.session import ReviewSession
from drill.settings import Settings
from storage.db import DatabaseError, open_database
from tests.support.clocks import Clock


def session_for(deck_dir: Path, clock: Clock, **settings: int) -> ReviewSession:
    decks = load_decks([deck_dir], include_bundled=False)
    db = open_database(database_path())
    return ReviewSession(decks, db, settings=Settings(**settings), now=clock)


def rows(sql: str) -> list[tuple]:
    conn = sqlite3.connect(database_path())
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_rate_commits_and_advances(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    assert session.current is not None and session.current.card.id == "alpha"
    assert session.current.is_new and session.remaining == 3
    preview = session.preview_intervals()
    assert set(preview) == {1, 2, 3, 4} and preview[1] < preview[4]
    clock.now += timedelta(seconds=7)
    session.rate(4, duration_ms=6500)
    assert rows("SELECT card_id, rating, duration_ms, state_before FROM review_log") == [
        ("alpha", 4, 6500, None)
    ]
    ((state, due),) = rows("SELECT state, due FROM card_state WHERE card_id = 'alpha'")
    assert state == 2 and due > "2026-03-04"
    assert session.current.card.id == "beta" and session.remaining == 2
    assert session.stats.reviewed == 1 and session.stats.again == 0
    assert session.stats.elapsed_s == 7.0


def test_undo_restores_state_and_removes_log_row(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(3, 1000)
    session.rate(4, 1000)
    assert session.current.card.id == "gamma"  # type: ignore[union-attr]
    assert session.undo() is True
    assert session.current.card.id == "beta"  # type: ignore[union-attr]
    assert rows("SELECT card_id FROM review_log") == [("alpha",)]
    assert rows("SELECT card_id FROM card_state WHERE card_id = 'beta'") == []
    assert session.remaining == 3  # beta, gamma, and alpha's learning step
    assert session.stats.reviewed == 1
    assert session.undo() is True and session.current.card.id == "alpha"  # type: ignore[union-attr]
    assert rows("SELECT COUNT(*) FROM review_log") == [(0,)]
    assert rows("SELECT COUNT(*) FROM card_state") == [(0,)]
    assert session.undo() is False


def test_undo_a_second_review_restores_the_first_one(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(4, 10)  # alpha -> review, days ahead
    before = rows("SELECT state, stability, due, reps FROM card_state WHERE card_id='alpha'")
    clock.now += timedelta(days=30)
    later = session_for(deck_dir, clock)
    assert later.current.card.id == "alpha" and not later.current.is_new  # type: ignore[union-attr]
    later.rate(1, 10)
    assert rows("SELECT lapses FROM card_state WHERE card_id='alpha'") == [(1,)]
    assert later.undo() is True
    after = rows("SELECT state, stability, due, reps FROM card_state WHERE card_id='alpha'")
    assert after == before


def test_again_comes_back_in_the_same_session(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(1, 10)  # alpha: again -> due in about a minute
    assert [session.current.card.id] == ["beta"]  # type: ignore[union-attr]
    clock.now += timedelta(minutes=5)  # alpha is due again: it goes before gamma
    session.rate(3, 10)
    assert session.current.card.id == "alpha"  # type: ignore[union-attr]
    session.rate(3, 10)
    session.rate(3, 10)  # gamma
    while session.current is not None:  # learning steps shown early once nothing else is left
        assert session.current.card.id in {"alpha", "beta", "gamma"}
        session.rate(4, 10)
    assert session.stats.again == 1 and session.remaining == 0


def test_bury_until_tomorrow(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.bury()
    assert session.current.card.id == "beta"  # type: ignore[union-attr]
    ((buried_until, state),) = rows("SELECT buried_until, state FROM card_state")
    expected = next_day_start(clock.now).astimezone(clock.now.tzinfo)
    assert buried_until == expected.strftime("%Y-%m-%d %H:%M:%S.%f") and state is None
    fresh = session_for(deck_dir, clock)
    assert [fresh.current.card.id, fresh.remaining] == ["beta", 2]  # type: ignore[union-attr]
    clock.now = expected + timedelta(minutes=1)
    assert session_for(deck_dir, clock).current.card.id == "alpha"  # type: ignore[union-attr]


def test_suspend_keeps_card_out(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(3, 10)
    session.suspend()  # beta
    assert rows("SELECT card_id, suspended FROM card_state ORDER BY card_id") == [
        ("alpha", 0),
        ("beta", 1),
    ]
    clock.now += timedelta(days=400)
    ids = []
    later = session_for(deck_dir, clock)
    while later.current is not None:
        ids.append(later.current.card.id)
        later.rate(4, 10)
    assert "beta" not in ids and {"alpha", "gamma"} <= set(ids)


def test_daily_new_limit_counts_cards_introduced_today(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock, new_cards_per_day=2)
    assert session.remaining == 2
    session.rate(4, 10)
    again = session_for(deck_dir, clock, new_cards_per_day=2)
    assert [again.current.card.id, again.remaining] == ["beta", 1]  # type: ignore[union-attr]


def test_edited_card_is_noticed_and_history_kept(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(4, 10)
    path = deck_dir / "basics.yaml"
    path.write_text(path.read_text().replace("The first.", "The very first."))
    clock.now += timedelta(days=60)
    later = session_for(deck_dir, clock)
    assert later.current.card.id == "alpha" and later.current.edited  # type: ignore[union-attr]
    paint = first_paint([deck_dir], include_bundled=False, now=clock.now)
    assert paint is not None and paint.edited_since_review("alpha")
    later.rate(3, 10)
    assert rows("SELECT COUNT(*) FROM review_log WHERE card_id = 'alpha'") == [(2,)]
    assert not first_paint([deck_dir], include_bundled=False, now=clock.now).edited_since_review(  # type: ignore[union-attr]
        "alpha"
    )


def test_first_paint_matches_the_session_queue(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    session.rate(4, 10)
    clock.now += timedelta(days=30)
    paint = first_paint([deck_dir], include_bundled=False, now=clock.now)
    assert paint is not None
    assert [s.as_json() | {"next_due": None} for s in paint.summaries] == [
        {"deck": "basics", "title": "Basics", "due": 1, "new": 2, "next_due": None}
    ]
    later = session_for(deck_dir, clock)
    assert paint.first is not None and paint.first.id == later.current.card.id == "alpha"  # type: ignore[union-attr]
    assert [e.card_id for e in paint.queue] == ["alpha", "beta", "gamma"]


CRASH_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from drill.decks.loader import load_decks
    from drill.paths import database_path
    from drill.review.session import ReviewSession
    from storage.db import open_database

    session = ReviewSession(load_decks([Path(sys.argv[1])], include_bundled=False),
                            open_database(database_path()))
    card = session.current.card.id
    session.rate(3, 1234)
    print("rated", card, flush=True)
    sys.stdin.read()  # block until killed
    """
)


def test_rating_survives_sigkill_right_after_rate(deck_dir: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASH_SCRIPT, str(deck_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.strip() == "rated alpha"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rows("SELECT card_id, rating, duration_ms FROM review_log") == [("alpha", 3, 1234)]


def test_a_damaged_database_gives_the_storage_error_on_rate(deck_dir: Path, clock: Clock) -> None:
    session = session_for(deck_dir, clock)
    assert session.current is not None and session.current.card.id == "alpha"
    conn = sqlite3.connect(database_path())  # garbage lands in alpha's row behind our back
    conn.execute(
        "INSERT INTO card_state (card_id, deck_id, state, due, reps, lapses, suspended) "
        "VALUES ('alpha', 'basics', 2, 'garbage', 0, 0, 0)"
    )
    conn.commit()
    conn.close()
    with pytest.raises(DatabaseError) as caught:
        session.rate(3, 10)
    assert "\n" not in str(caught.value) and str(database_path()) in str(caught.value)


def test_a_session_skips_a_card_whose_stored_values_drill_never_writes(
    deck_dir: Path, clock: Clock
) -> None:
    session_for(deck_dir, clock).rate(3, 10)  # alpha now has a stored schedule
    conn = sqlite3.connect(database_path())
    conn.execute("UPDATE card_state SET due = x'00ff'")
    conn.commit()
    conn.close()
    session = session_for(deck_dir, clock)  # issue 25: a notice and that card skipped
    shown = []
    while session.current is not None:
        shown.append(session.current.card.id)
        session.rate(3, 10)
    assert "alpha" not in shown and shown

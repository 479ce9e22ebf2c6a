from __future__ import annotations

import random
import sqlite3

import pytest

from drill.mock.clock import PhaseAdvanced, RoundFinished, Status
from drill.mock.errors import MockError
from drill.mock.feedback import review_rater
from drill.mock.round import MockRun
from tests.support.mock_rounds import CARDS, open_store, recording_rater, tiny_round


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "drill.sqlite3")
    yield s
    s.db.close()


def answers_in_db(store, round_id):
    with sqlite3.connect(store.db.path) as conn:
        return dict(
            conn.execute(
                "SELECT prompt_key, answer FROM mock_prompt WHERE round_id = ? ORDER BY position",
                (round_id,),
            ).fetchall()
        )


def play(store, clock, seed=0):
    run = MockRun.start_new(store, tiny_round(), CARDS, rng=random.Random(seed), now=clock)
    run.start()
    return run


def test_autosave_writes_only_changed_answers_with_a_timestamp(store, clock):
    run = play(store, clock)
    first = run.phase_prompts()[0]
    assert not run.autosave()
    run.set_answer(first.id, "optimizer state and sampler")
    assert run.dirty
    assert run.autosave()
    assert not run.dirty
    assert answers_in_db(store, run.round_id)["restart"] == "optimizer state and sampler"
    saved = store.load(run.round_id).prompts[0]
    assert saved.answer_saved_at is not None
    assert store.load(run.round_id).prompts[1].answer_saved_at is None


def test_a_phase_change_autosaves_the_typing_and_the_clock(store, clock):
    run = play(store, clock)
    run.set_answer(run.phase_prompts()[0].id, "typed just before the bell")
    clock.advance(61)
    events = run.tick()
    assert PhaseAdvanced(0, 1, "auto") in events
    assert answers_in_db(store, run.round_id)["restart"] == "typed just before the bell"
    assert store.load(run.round_id).clock_state.phase == 1


def test_resume_restores_answers_phase_and_time(store, clock):
    run = play(store, clock)
    run.set_answer(run.phase_prompts()[0].id, "RNG state")
    clock.advance(70)
    run.tick()
    run.autosave()
    resumed = MockRun.resume(store, run.round_id, now=clock)
    assert resumed.clock.status is Status.PAUSED
    assert resumed.clock.phase == 1
    assert resumed.clock.state.used_s == [60, 10]
    assert resumed.answers[run.phase_prompts(0)[0].id] == "RNG state"
    assert store.latest_unfinished() == run.round_id


def test_a_full_round_is_graded_reported_and_weak_cards_fed_back(store, clock):
    run = play(store, clock)
    restart, card_prompt = run.prompts
    run.set_answer(restart.id, "Adam moments, the sampler position. No RNG.")
    clock.advance(30)
    assert run.advance() == [PhaseAdvanced(0, 1, "key")]
    run.set_answer(card_prompt.id, "no idea")
    clock.advance(500)
    assert run.tick()[-1] == RoundFinished("time")
    assert run.finished

    auto = run.coverage()
    assert [c.covered for c in auto[restart.id]] == [True, True, False]
    assert [c.covered for c in auto[card_prompt.id]] == [False, False]

    rated = []
    # the user corrects one bullet of the card prompt: they did cover it
    report = run.grade({card_prompt.id: [True, False]}, rate=recording_rater(rated))
    assert rated == [(card_prompt.card_id, "test-deck", 2)]  # half covered -> Hard
    assert report.phases[0].score == pytest.approx(2 / 3)
    assert report.phases[0].band == "solid"
    assert report.phases[0].used_s == 30 and report.phases[0].budget_s == 60
    assert report.phases[1].used_s == 120  # the 30 s phase one left unused are not banked
    assert report.score == pytest.approx(3 / 5)
    assert report.band == "developing"
    assert report.finish_reason == "time"

    assert store.report(run.round_id) == report
    (row,) = store.history()
    assert (row.id, row.status, row.band) == (run.round_id, "done", "developing")
    assert store.latest_unfinished() is None
    with pytest.raises(MockError, match="is finished; see `drill mock report"):
        MockRun.resume(store, run.round_id, now=clock)

    md = report.to_markdown()
    assert md.startswith(f"# Mock round {run.round_id}: Tiny round")
    assert "| Phase one | solid | 67% | 0:30 | 1:00 |" in md
    assert "- [ ] RNG state _(auto: missed)_" in md
    assert f"Fed back to review: {card_prompt.card_id}: new, not rated." in md


def test_grading_before_the_end_is_refused(store, clock):
    run = play(store, clock)
    with pytest.raises(MockError, match="still running"):
        run.grade({})


def test_the_next_round_avoids_the_previous_rounds_card(store, clock):
    first = play(store, clock)
    picked = first.prompts[1].card_id
    for seed in range(5):
        nxt = play(store, clock, seed=seed)
        assert nxt.prompts[1].card_id not in (None, picked)
        picked = nxt.prompts[1].card_id


def test_report_of_unknown_or_ungraded_round(store, clock):
    run = play(store, clock)
    with pytest.raises(MockError, match="has no report yet"):
        store.report(run.round_id)
    with pytest.raises(MockError, match="no mock round with id 99"):
        store.report(99)


def test_weak_cards_are_rated_into_the_review_schedule(store, clock):
    from datetime import timedelta

    from drill.decks.loader import load_decks
    from drill.mock.feedback import mastery, review_rater
    from drill.review.scheduler import rate_card
    from drill.times import utc_now

    run = play(store, clock)
    card_prompt = run.prompts[1]
    # reviewed long ago, so due: a mock round rates only a card reviewed before (issue 34)
    rate_card(store.db, card_prompt.card_id, "test-deck", 3, content_hash=None,
              now=utc_now() - timedelta(days=60))  # fmt: skip
    run.set_answer(card_prompt.id, "no idea")
    clock.advance(1000)
    run.tick()
    rate = review_rater(store.db, load_decks([]))  # a text round's rater
    run.grade({card_prompt.id: [False, False]}, rate=rate)
    (_seed, log) = store.db.review.reviews(card_prompt.card_id)
    assert log.rating == 1  # nothing covered -> Again
    assert log.deck_id == "test-deck"
    assert store.db.review.card_state(card_prompt.card_id)["stability"] > 0
    assert set(mastery(store.db)) == {card_prompt.card_id}


def test_the_report_says_what_each_rating_did_to_its_card(store, clock):
    """Issue 34: the report shows the rating's outcome (a new card stays new, a due card is
    rescheduled), not the rating it asked for, and the stored report says the same."""
    from datetime import timedelta

    from drill.decks.loader import load_decks
    from drill.review.scheduler import rate_card
    from drill.times import utc_now

    rate = review_rater(store.db, load_decks([]))
    outcomes = []
    for seen_before in (False, True):
        run = play(store, clock)
        card_prompt = run.prompts[1]
        if seen_before:  # reviewed long ago, so due now
            rate_card(store.db, card_prompt.card_id, "test-deck", 3, content_hash=None,
                      now=utc_now() - timedelta(days=60))  # fmt: skip
        run.set_answer(card_prompt.id, "no idea")
        clock.advance(1000)
        run.tick()
        report = run.grade({card_prompt.id: [False, False]}, rate=rate)
        assert store.report(run.round_id).to_markdown() == report.to_markdown()
        outcomes.append((card_prompt.card_id, report.to_markdown()))
    (new_id, new_md), (due_id, due_md) = outcomes
    assert f"Fed back to review: {new_id}: new, not rated." in new_md
    assert "rated **" not in new_md
    assert f"Fed back to review: {due_id}: Again, due in " in due_md
    assert len(store.db.review.reviews(due_id)) == 2


def test_report_wording_title_length_and_whole_headings():
    from datetime import UTC, datetime

    from drill.mock.report import RoundReport, finish_text, round_title

    assert finish_text("ended") == "ended early (F10)"
    assert finish_text("time") == "ended when the time ran out"
    assert round_title("Quick round (10 min)", 120.0) == "Quick round (2 min)"
    assert round_title("Standard round (55 min)", 55 * 60) == "Standard round (55 min)"
    assert round_title("No length here", 120.0) == "No length here"
    long_prompt = "Why " + "and why " * 40 + "does the loss spike after resume?"
    when = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)
    report = RoundReport.model_validate(
        {
            "round_id": 1, "round_key": "quick", "title": "Quick round (2 min)",
            "started_at": when, "finished_at": when, "finish_reason": "ended",
            "total_budget_s": 120, "total_used_s": 60, "score": 0.5, "band": "developing",
            "phases": [{
                "id": "one", "title": "Phase one", "budget_s": 120, "used_s": 60, "score": 0.5,
                "band": "developing",
                "prompts": [{"key": "p1", "text": long_prompt, "card_id": None,
                             "answer": "", "bullets": [], "score": 0.5, "band": "developing",
                             "feedback_rating": None}],
            }],
        }
    )  # fmt: skip
    md = report.to_markdown()
    assert "ended by" not in md and "09:30 UTC, ended early (F10)" in md
    assert f"### {' '.join(long_prompt.split())}\n" in md


def test_an_unanswered_prompt_is_not_rated_and_the_report_says_so(store, clock):
    run = play(store, clock)
    restart, _unanswered = run.prompts
    run.set_answer(restart.id, "optimizer state")
    clock.advance(1000)
    run.tick()
    rated = []
    report = run.grade({}, rate=recording_rater(rated))
    assert rated == []  # the card's prompt was never answered: nothing was examined
    assert report.weak_cards() == []
    assert report.phases[1].score == 0  # it still scores nothing
    assert "Not answered: the card is not rated." in report.to_markdown()


def test_an_answered_prompt_with_gaps_is_rated(store, clock):
    run = play(store, clock)
    card_prompt = run.prompts[1]
    run.set_answer(card_prompt.id, "the optimizer state")
    clock.advance(1000)
    run.tick()
    rated = []
    run.grade({}, rate=recording_rater(rated))
    assert rated == [(card_prompt.card_id, "test-deck", 2)]  # one of two bullets: Hard


def test_a_never_reviewed_card_is_left_new_by_every_round(store):
    from datetime import timedelta

    from drill.decks.loader import load_decks
    from drill.mock.feedback import review_rater
    from drill.review.scheduler import rate_card
    from drill.times import utc_now
    from storage.snapshot import read_snapshot

    def load_snapshot(db):
        return read_snapshot(db.path)

    decks = load_decks([])
    since = utc_now() - timedelta(hours=1)
    rate_card(store.db, "seen-card", "test-deck", 3, content_hash=None,
              now=utc_now() - timedelta(days=60))  # fmt: skip
    introduced = load_snapshot(store.db).introduced_since(since)

    rate = review_rater(store.db, decks)  # text and coding rounds alike (issue 34)
    assert rate("never-seen", "test-deck", 1).describe() == "never-seen: new, not rated"
    assert store.db.review.reviews("never-seen") == []
    assert load_snapshot(store.db).introduced_since(since) == introduced  # the limit is untouched
    assert rate("seen-card", "test-deck", 1).changed
    assert [log.rating for log in store.db.review.reviews("seen-card")] == [3, 1]

"""The checklist a person confirms before a round rates any card (drill.mock.checklist)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from drill.mock.checklist import (
    CONFIRMED,
    NOT_RATED,
    CardOutcome,
    RatingChecklist,
)
from drill.mock.errors import MockError
from drill.review.outside import RESCHEDULED, CardChange
from drill.review.scheduler import RatedCard
from tests.support.rating_checklists import entries, recording


def test_nothing_is_rated_until_confirm_and_the_flipped_ticks_decide() -> None:
    rated: list[tuple[str, str, int]] = []
    checklist = RatingChecklist(entries(), recording(rated))
    assert checklist.proposed_ratings() == {
        "llm-zero-stages": (1, "a follow-up and a failed check"),
        "map-sampler": (1, "a failed check"),
    }  # the unanswered question rates nothing
    for item in range(4):  # the person reads the answer: it named all four
        checklist.flip(0, item)
    assert checklist.flip(1, 0) is True  # and the check's failure was the harness's fault
    assert rated == []  # flipping rates nothing
    assert checklist.proposed_ratings() == {}

    checklist.flip(0, 3)  # three of four: Hard
    outcome = checklist.confirm()
    assert outcome.status == CONFIRMED
    assert rated == [("llm-zero-stages", "llm", 2)]
    assert outcome.lines() == ["llm-zero-stages: Hard (a follow-up)"]
    with pytest.raises(MockError, match="already confirmed"):
        checklist.confirm()
    with pytest.raises(MockError):
        checklist.flip(0, 0)
    assert len(rated) == 1


def test_do_not_rate_rates_nothing_and_says_so() -> None:
    rated: list[tuple[str, str, int]] = []
    checklist = RatingChecklist(entries(), recording(rated))
    outcome = checklist.do_not_rate()
    assert outcome.status == NOT_RATED and outcome.cards == [] and rated == []
    assert outcome.lines() == ["not rated: you chose not to rate this round"]
    with pytest.raises(MockError, match="already not rated"):
        checklist.confirm()
    assert rated == []


def test_the_report_line_says_the_due_date_before_and_after() -> None:
    before = datetime(2026, 3, 20, 9, 0, tzinfo=UTC)
    after = datetime(2026, 3, 10, 12, 10, tzinfo=UTC)
    rated = RatedCard(7, {"due": before, "state": 2}, {"due": after, "state": 3})
    change = CardChange("c", 1, RESCHEDULED, after, after, 1, rated)  # a learning step
    line = CardOutcome("c", 1, "a follow-up", change).line()
    assert line == (
        "c: Again, due in 1 min (was due 2026-03-20 09:00 UTC, now 2026-03-10 12:10 UTC) "
        "(a follow-up)"
    )


def test_plain_lines_show_every_tick_and_the_ratings_confirm_would_give() -> None:
    checklist = RatingChecklist(entries(), None)
    checklist.flip(0, 1)
    text = "\n".join(checklist.plain_lines())
    assert "   [ ] 1.1 a\n   [x] 1.2 b (flipped)\n   [ ] 1.3 c" in text
    assert "(not answered: rates nothing)" in text
    assert "  llm-zero-stages: Again (a follow-up and a failed check)" in text


def test_an_item_is_flipped_by_the_label_the_text_numbers_it_with() -> None:
    checklist = RatingChecklist(entries(), None)
    before = checklist.proposed_ratings()
    assert checklist.flip_labelled("1.2") is True
    assert checklist.entries[0].items[1].ticked and checklist.entries[0].items[1].flipped
    assert "[x] 1.2 b (flipped)" in "\n".join(checklist.plain_lines())
    assert checklist.flip_labelled(" 1.2 ") is False  # flipped back: the proposal again
    assert checklist.proposed_ratings() == before
    for label, said in [
        ("9.1", "no item 9.1"),
        ("1.9", "no item 1.9"),
        ("0.1", "no item 0.1"),
        ("1", "not an item"),
        ("a.b", "not an item"),
        ("1.-1", "not an item"),
    ]:
        with pytest.raises(MockError, match=said):
            checklist.flip_labelled(label)

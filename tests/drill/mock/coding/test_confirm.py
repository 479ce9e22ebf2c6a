"""The coding round's checklist before feedback (drill.mock.coding.confirm): the matcher's ticks
are proposals; a person's flip decides, and nothing is rated before the confirm (issue 37)."""

from __future__ import annotations

import json

from drill.mock.checklist import NOT_RATED
from drill.mock.coding.confirm import coding_checklist, settle
from drill.mock.coding.report import build_report
from tests.support.coding_reports import played_round, with_answers
from tests.support.rating_checklists import recording


def test_a_follow_up_the_matcher_missed_is_not_rated_again_once_the_person_ticks_it(tmp_path):
    session = played_round(tmp_path / "rounds")
    with_answers(session, "", "The sampler position moves.")  # Q2: matcher ticks 1 of 3
    rated: list[tuple[str, str, int]] = []
    decks = {"card-b": "x", "card-shared": "x", "map-sampler-state-correctness": "m"}
    rate, deck_of = recording(rated), decks.__getitem__
    checklist = coding_checklist(session, build_report(session), rate, deck_of)
    assert checklist is not None
    titles = [entry.title for entry in checklist.entries]
    assert titles[0] == "Check failed: sample 17 seen twice in epoch 0"
    q2 = next(i for i, t in enumerate(titles) if t.startswith("Follow-up Q2:"))
    assert [item.proposed for item in checklist.entries[q2].items] == [True, False, False]
    assert checklist.proposed_ratings()["card-b"] == (1, "a follow-up")
    checklist.flip(q2, 1)
    checklist.flip(q2, 2)  # the person reads the answer as complete
    assert rated == []  # nothing before the confirm

    lines = settle(session, checklist.confirm())
    assert [card for card, _deck, _rating in rated] == ["map-sampler-state-correctness"]
    assert lines == ["map-sampler-state-correctness: Again (a failed check)"]
    assert coding_checklist(session, build_report(session), rate, deck_of) is None  # once


def test_do_not_rate_settles_the_round_without_a_rating(tmp_path):
    session = played_round(tmp_path / "rounds")
    rated: list[tuple[str, str, int]] = []
    checklist = coding_checklist(session, build_report(session), recording(rated), lambda c: "d")
    assert checklist is not None
    settle(session, checklist.do_not_rate())
    marker = json.loads((session.folder / "feedback.json").read_text())
    assert rated == [] and marker["status"] == NOT_RATED and marker["rated"] == []
    assert build_report(session).fed_back == ["not rated: you chose not to rate this round"]

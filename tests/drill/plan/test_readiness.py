"""Readiness per topic and the weakest five, from fixed data in a throwaway database written
through the real repositories (reviews, run log, exercise progress, plan) and a coding round
graded in DRILL_HOME/rounds."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from drill.decks.loader import DeckSet, load_decks
from drill.plan.readiness import (
    CardFacts,
    Readiness,
    TopicReadiness,
    meter,
    readiness,
    topics_for,
)
from drill.settings import Settings
from storage.db import Database, open_database
from storage.runs import RunEnd
from tests.support.decks import write_deck
from tests.support.mock_rounds import write_grade

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TODAY = date(2026, 3, 10)
SETTINGS = Settings(day_start_hour=0)
# card "map-sampler-state-correctness" is the card the coding check distributed.exactly_once
# teaches (drill.mock.coding.report.CHECK_CARDS): the check's verdict reaches its topics
DECK = """\
deck: prep
title: Prep
cards:
  - id: map-sampler-state-correctness
    level: medium
    tags: [sampler, phase-distributed]
    front: What must the sampler restore?
    back: Its position.
    exercise: full-state-checkpoint
    lab:
      run: resume
    predict:
      ask: Weights-only resume, the first loss is
      choices:
        - {text: about the same, when: "loss_jump_ratio < 1.2"}
        - {text: clearly higher, when: "loss_jump_ratio >= 2"}
  - id: sampler-two
    level: medium
    tags: [sampler]
    front: Why set_epoch?
    back: To reshuffle.
  - id: memory-one
    level: medium
    tags: [memory, phase-pushback]
    front: What holds the memory?
    back: States and activations.
  - id: memory-two
    level: medium
    tags: [memory]
    front: Activations scale with?
    back: Batch and sequence.
"""


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


@pytest.fixture
def decks(tmp_path: Path) -> DeckSet:
    write_deck(tmp_path / "decks", DECK, "prep.yaml")
    return load_decks([tmp_path / "decks"], include_bundled=False)


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = open_database(tmp_path / "drill.sqlite3")
    yield database
    database.close()


def reviewed(db: Database, card_id: str, days_ago: int, stability: float) -> None:
    """A card in review state, last reviewed `days_ago` days before NOW."""
    at = NOW - timedelta(days=days_ago)
    due = at + timedelta(days=stability)
    state = {"state": 2, "step": None, "stability": stability, "difficulty": 5.0,
             "due": due, "last_review": at, "reps": 3, "lapses": 0}  # fmt: skip
    db.review.record_review(card_id, "prep", 3, at, 4000, None, lambda _before: state)


def predicted(db: Database, card_id: str, certainty: str, right: bool) -> None:
    run = db.runs.start("lab", "resume", {}, 1, "", NOW, card_id=card_id,
                        predicted="clearly higher", certainty=certainty)  # fmt: skip
    db.runs.finish(run, RunEnd("ok", NOW, 1.0, {}, prediction_right=right))


def topic(found: Readiness, name: str, kind: str) -> TopicReadiness:
    return next(t for t in found.topics if t.topic == name and t.kind == kind)


def test_expected_recall_on_the_date_follows_the_forgetting_curve(decks, db, tmp_path) -> None:
    # stability 10 days, last review 2 days ago, the interview 8 days out: 10 days elapsed on
    # the date, where FSRS's curve is at 0.9 by definition (R(S) = 0.9, whatever the decay)
    reviewed(db, "map-sampler-state-correctness", days_ago=2, stability=10.0)
    db.plans.record(TODAY + timedelta(days=8), "training-infra", 45, 0.9, NOW)
    found = readiness(decks, db, SETTINGS, NOW, rounds_dir=tmp_path / "rounds")

    assert found.day == TODAY + timedelta(days=8)
    assert found.measured_on == found.day
    correctness = topic(found, "correctness", "area")  # tag sampler: both sampler cards
    assert (correctness.cards, correctness.introduced) == (2, 1)
    assert correctness.expected_recall == pytest.approx(0.45)  # 0.9 and a new card's 0
    assert topic(found, "distributed", "phase").expected_recall == pytest.approx(0.9)
    assert topic(found, "performance", "area").expected_recall == 0.0  # tag memory


def test_without_a_plan_recall_is_for_today(decks, db, tmp_path) -> None:
    reviewed(db, "map-sampler-state-correctness", days_ago=10, stability=10.0)
    found = readiness(decks, db, SETTINGS, NOW, rounds_dir=tmp_path / "rounds")

    assert (found.day, found.role, found.measured_on) == (None, None, TODAY)
    assert topic(found, "distributed", "phase").expected_recall == pytest.approx(0.9)


def test_predictions_exercises_and_checks_count_per_topic(decks, db, tmp_path) -> None:
    from drill.mock.coding.session import CodingSession

    predicted(db, "map-sampler-state-correctness", "high", right=False)
    predicted(db, "map-sampler-state-correctness", "medium", right=True)
    predicted(db, "memory-one", "low", right=True)
    db.exercises.checked("full-state-checkpoint", "ok", NOW)
    session = CodingSession.create(tmp_path / "rounds")
    write_grade(session, 1, [("distributed.exactly_once", True), ("skeleton.exits", True)])
    write_grade(session, 2, [("distributed.exactly_once", False)])  # the newest verdict

    found = readiness(decks, db, SETTINGS, NOW, rounds_dir=tmp_path / "rounds")
    correctness = topic(found, "correctness", "area")
    assert correctness.predictions == {"low": (0, 0), "medium": (1, 1), "high": (0, 1)}
    assert correctness.exercises == (1, 1)
    assert correctness.coding_checks == (0, 1)
    memory = topic(found, "performance", "area")  # tag memory
    assert memory.predictions["low"] == (1, 1)
    assert memory.exercises == (0, 0)
    assert memory.coding_checks == (0, 0)


def graded_talk_round(db: Database, answers: list[tuple[str, str | None, int, str, list[bool]]]):
    """A graded talk round of the standard round's phases: per prompt (key, card, phase index,
    answer, the confirmed checklist)."""
    from drill.mock.clock import ClockState
    from drill.mock.loader import find_round
    from drill.mock.rubric_bands import GradedPrompt, PhaseInfo, build_report
    from drill.mock.selection import PlannedPrompt
    from drill.mock.store import GradeRow, MockStore

    definition = find_round("standard")
    store = MockStore(db, wall=lambda: NOW)
    planned = [PlannedPrompt(phase, key, "q?", ("a", "b"), card, "prep" if card else None)
               for key, card, phase, _answer, _checked in answers]  # fmt: skip
    budgets = [p.minutes * 60 for p in definition.phases]
    round_id = store.create_round(
        definition, budgets, planned, ClockState(used_s=[0.0] * len(budgets))
    )
    saved = store.load(round_id)
    graded = [
        GradedPrompt(phase, key, "q?", answer, ["a", "b"], ["missed", "missed"], checked, card)
        for key, card, phase, answer, checked in answers
    ]
    phases = [
        PhaseInfo(p.id, p.title, b, 0.0) for p, b in zip(definition.phases, budgets, strict=True)
    ]
    report = build_report(round_id=round_id, round_key="standard", title="t", started_at=NOW,
                          finished_at=NOW, finish_reason="ended", phases=phases,
                          prompts=graded)  # fmt: skip
    rows = [GradeRow(p.id, ["a", "b"], ["missed", "missed"], g.checked)
            for p, g in zip(saved.prompts, graded, strict=True)]  # fmt: skip
    store.save_report(round_id, rows, report)


def test_follow_up_verdicts_count_in_their_phase_and_cards_topics(decks, db, tmp_path) -> None:
    graded_talk_round(db, [
        ("lift-to-distributed", None, 2, "init, sampler", [True, False]),  # partial
        ("card:memory-one", "memory-one", 4, "", [False, False]),  # unanswered
        ("card:sampler-two", "sampler-two", 4, "x", [False, False]),  # missed
    ])  # fmt: skip

    found = readiness(decks, db, SETTINGS, NOW, rounds_dir=tmp_path / "rounds")
    distributed = topic(found, "distributed", "phase")
    assert distributed.followups == {"covered": 0, "partial": 1, "missed": 0, "unanswered": 0}
    pushback = topic(found, "pushback", "phase")
    assert pushback.followups == {"covered": 0, "partial": 0, "missed": 1, "unanswered": 1}
    assert topic(found, "correctness", "area").followups["missed"] == 1  # sampler-two
    actions = [item.action for item in found.weakest if item.kind == "followup"]
    assert actions == [  # missed, partial, unanswered: weakest first
        "review card sampler-two",
        "a round on prompt lift-to-distributed (drill mock talk)",
        "review card memory-one",
    ]


def test_the_weakest_five_each_carry_one_action(decks, db, tmp_path) -> None:
    from drill.mock.coding.session import CodingSession

    reviewed(db, "memory-two", days_ago=30, stability=2.0)  # long forgotten
    predicted(db, "map-sampler-state-correctness", "high", right=False)
    session = CodingSession.create(tmp_path / "rounds")
    write_grade(session, 1, [("distributed.exactly_once", False)])

    found = readiness(decks, db, SETTINGS, NOW, rounds_dir=tmp_path / "rounds")
    actions = [item.action for item in found.weakest]
    assert len(found.weakest) == 4  # a card, a lab, a check, an exercise: nothing else is weak
    assert actions[0] == "a round on prompt 'Distributed lift' (drill mock)"  # weakness 1.0
    assert "drill lab run resume (predict first)" in actions  # 1 of 1 wrong
    assert "review card memory-two" in actions
    assert "drill exercise start full-state-checkpoint" in actions


def test_weakest_holds_five_with_at_most_two_of_a_kind_while_others_wait(tmp_path, db) -> None:
    cards = "\n".join(
        f"  - {{id: c{i}, level: easy, tags: [t], front: q{i}, back: a, exercise: "
        f"full-state-checkpoint}}"
        for i in range(6)
    )
    write_deck(tmp_path / "d", f"deck: many\ntitle: Many\ncards:\n{cards}\n", "many.yaml")
    decks = load_decks([tmp_path / "d"], include_bundled=False)
    for i in range(6):
        reviewed(db, f"c{i}", days_ago=300 + i, stability=0.1)  # recall ~0.3: weaker
    # than the exercise not started (0.5): only the cap of two a kind lets the exercise in

    found = readiness(decks, db, SETTINGS, NOW, rounds_dir=tmp_path / "rounds")
    kinds = [item.kind for item in found.weakest]
    assert len(kinds) == 5
    assert kinds.count("exercise") == 1  # one exercise linked by all six cards
    assert kinds.count("card") == 4  # two while the exercise waits, then the rest fill in


def test_json_is_plain_data(decks, db, tmp_path) -> None:
    import json

    found = readiness(decks, db, SETTINGS, NOW, rounds_dir=tmp_path / "rounds")
    data = json.loads(json.dumps(found.as_json()))
    assert data["interview_day"] is None
    assert {t["kind"] for t in data["topics"]} == {"area", "phase"}  # no tag on 5 cards
    assert all(set(w) >= {"what", "why", "action"} for w in data["weakest"])


def test_tags_on_enough_cards_are_topics_and_phase_tags_are_the_phases() -> None:
    def facts(card_id: str, *tags: str) -> CardFacts:
        return CardFacts(card_id, "d", tags, introduced=False, recall=0.0)

    cards = [facts("a", "x", "phase-p"), facts("b", "x", "y", "phase-p"), facts("c", "y")]
    topics = topics_for({"area": ["y"]}, [("p", "P", ["phase-p"], [])], cards, min_tag_cards=2)
    assert [(t.name, t.kind) for t in topics] == [
        ("area", "area"),
        ("p", "phase"),
        ("x", "tag"),
        ("y", "tag"),
    ]


def test_meter_fills_in_eighths() -> None:
    assert meter(0.0, 4) == "····"
    assert meter(1.0, 4) == "████"
    assert meter(0.5, 4) == "██··"
    assert meter(1 / 8, 4) == "▌···"  # half a cell

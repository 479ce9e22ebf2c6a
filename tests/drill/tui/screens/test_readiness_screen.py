"""The readiness screen: opened through the services (as `R` on home opens it), topics as
bars, the weakest five with their actions, escape goes back; snapshots at 80x24 and 120x40 of
fixed figures."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static

from drill.decks.loader import load_decks
from drill.plan.readiness import (
    CardFacts,
    CodingCheck,
    Evidence,
    FollowUp,
    Prediction,
    Readiness,
    build_readiness,
    topics_for,
)
from drill.tui.screens.readiness import ReadinessScreen, headline, open_readiness_screen
from storage.db import open_database
from tests.support.decks import write_deck
from tests.support.pilot import HostApp, run_async, screen_text, until
from tests.support.services import slot_for

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TODAY = date(2026, 3, 10)


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def fixed() -> Readiness:
    """Twelve cards over three tags and two phases, some introduced, a wrong lab prediction,
    a failed coding check and a missed follow-up."""
    tags = ("sampler", "memory", "checkpoint")
    cards = [
        CardFacts(f"card-{i}", "prep", (tags[i % 3], "phase-distributed" if i < 6 else
                  "phase-pushback"), introduced=i < 8, recall=(0.95, 0.7, 0.3, 0.0)[i % 4],
                  lab="resume" if i == 1 else None, predicts=i == 1,
                  exercise="full-state-checkpoint" if i == 2 else None)
        for i in range(12)
    ]  # fmt: skip
    evidence = Evidence(
        today=TODAY,
        measured_on=TODAY + timedelta(days=10),
        cards=cards,
        predictions=[
            Prediction("card-1", "resume", "high", False),
            Prediction("card-1", "resume", "low", True),
        ],
        exercise_status={"full-state-checkpoint": "failing"},
        coding_checks=[
            CodingCheck("distributed.exactly_once", False, ("card-0",), 3, "Distributed lift")
        ],
        followups=[FollowUp("missed", ("card-4",), "pushback", "ddp-or-fsdp", "Why DDP?")],
        interview_day=TODAY + timedelta(days=10),
        role="training-infra",
    )
    areas = {"correctness": ["sampler"], "performance": ["memory"], "reliability": ["checkpoint"]}
    phases = [("distributed", "Distributed lift", ["phase-distributed"], []),
              ("pushback", "Pushback", ["phase-pushback"], [])]  # fmt: skip
    return build_readiness(evidence, topics_for(areas, phases, cards, min_tag_cards=4))


async def painted(pilot: Pilot) -> None:
    await pilot.pause()


def test_readiness_120x40(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(HostApp(ReadinessScreen(fixed())), terminal_size=(120, 40),
                        run_before=painted)  # fmt: skip


def test_readiness_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(HostApp(ReadinessScreen(fixed())), terminal_size=(80, 24),
                        run_before=painted)  # fmt: skip


class SlotApp(HostApp):
    """A host with the app's services slot: what open_readiness_screen needs of DrillApp."""

    def __init__(self, slot) -> None:  # type: ignore[no-untyped-def]
        super().__init__(Screen())
        self.slot = slot


DECK = """\
deck: prep
title: Prep
cards:
  - {id: s1, level: easy, tags: [sampler], front: q, back: a}
  - {id: m1, level: easy, tags: [memory], front: q, back: a}
"""


@run_async
async def test_opens_through_the_services_and_escape_goes_back(tmp_path: Path) -> None:
    write_deck(tmp_path / "decks", DECK, "prep.yaml")
    decks = load_decks([tmp_path / "decks"], include_bundled=False)
    db = open_database(tmp_path / "drill.sqlite3")
    app = SlotApp(slot_for(decks, db, now=lambda: NOW))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            first = app.screen
            open_readiness_screen(app)  # type: ignore[arg-type]
            await until(pilot, lambda: isinstance(app.screen, ReadinessScreen))
            await pilot.pause()
            text = screen_text(app)
            assert "No interview plan: expected recall is for today." in text
            assert "correctness" in text and "Weakest five" in text
            assert "Back" in text and "Refresh" in text  # the keys, in the footer
            headline = str(app.screen.query_one("#readiness-headline", Static).render())
            assert "drill plan --date" in headline
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is first)
    finally:
        db.close()


def test_the_headline_shows_a_stored_role_as_text() -> None:
    hostile = "[/x] \x1b]2;t\x07 <b>"  # a role read from a tampered database
    found = Readiness(date(2026, 3, 20), hostile, [], [], today=date(2026, 3, 10),
                      measured_on=date(2026, 3, 20))  # fmt: skip
    line = headline(found)
    assert "[/x]" in line.plain and "<b>" in line.plain  # as typed, never parsed as markup
    assert "\x1b" not in line.plain and "\x07" not in line.plain
    assert isinstance(line, Text)  # a str given to Static is parsed: "[/x]" is a MarkupError

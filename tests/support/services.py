"""Services for screens under test: the app's own assembly over decks and a database the test
made (drill.services.assemble_services), in a slot that is already filled."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from drill.decks.loader import DeckSet
from drill.services import Services, ServicesSlot, assemble_services, system_now
from drill.settings import Settings


def services_for(
    decks: DeckSet | None,
    db: Any,
    *,
    now: Callable[[], datetime] = system_now,
    exercises_home: Path | None = None,
    settings: Settings | None = None,
) -> Services:
    """Default settings (not DRILL_HOME's file); no decks: an empty deck set."""
    return assemble_services(
        decks if decks is not None else DeckSet([], []),
        db,
        settings=settings or Settings(),
        now=now,
        exercises_home=exercises_home,
    )


def slot_for(decks: DeckSet | None, db: Any, **kw: Any) -> ServicesSlot:
    return ServicesSlot(services_for(decks, db, **kw))


def app_slot() -> ServicesSlot:
    """The app's own services over the test's DRILL_HOME and the bundled decks, as the CLI
    hands them to a mock round."""
    from drill.services import load_services

    return ServicesSlot(load_services())

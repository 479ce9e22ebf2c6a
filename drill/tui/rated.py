"""`CardsRated`: a card's schedule changed somewhere (review, a lab, an exercise, a round), so
every screen that shows schedules (home's counts, the browser's rows) reads them again.

The rating path calls `announce_rated(app, card_ids)` after its write committed; it posts the
message to every screen on the stack, the hidden ones too, so a screen is up to date when the
user comes back to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import App
from textual.message import Message


class CardsRated(Message):
    """These cards were rated (their schedule or history changed)."""

    def __init__(self, card_ids: tuple[str, ...]) -> None:
        super().__init__()
        self.card_ids = card_ids


def announce_rated(app: App[Any], card_ids: Iterable[str]) -> None:
    ids = tuple(card_ids)
    if not ids:
        return
    for screen in app.screen_stack:
        screen.post_message(CardsRated(ids))

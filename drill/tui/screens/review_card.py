"""The review screen's parts: the card it shows (a stored card or the first-paint record) and
the four rating choices under the answer."""

from __future__ import annotations

from typing import Any, Protocol

from textual.widgets import Static

from drill.tui.formatting import rating_label


class ShownCard(Protocol):
    id: str
    front: str
    back: str

    @property
    def rubric(self) -> Any: ...


class RatingChoice(Static):
    """One of the four rating choices; clicking it rates like its key (the review screen's
    rate action)."""

    def __init__(self, rating: int) -> None:
        super().__init__(rating_label(rating, None), id=f"rate-{rating}", classes="rating")
        self.rating = rating

    async def on_click(self) -> None:
        await self.screen.run_action(f"rate({self.rating})")

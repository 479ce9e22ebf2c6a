"""The checklist screen a round opens before it rates any card: keys move, flip, confirm or
decline, and no rating is written before enter (issue 37)."""

from __future__ import annotations

import pytest

from drill.mock.checklist import CONFIRMED, NOT_RATED, RatingChecklist
from drill.tui.screens.rating_checklist import RatingChecklistScreen
from tests.support.pilot import HostApp, run_async, until
from tests.support.rating_checklists import entries, recording

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


def host(rated: list) -> HostApp:  # type: ignore[type-arg]
    return HostApp(RatingChecklistScreen(RatingChecklist(entries(), recording(rated)), "Round 3"))


@run_async
async def test_no_card_is_rated_before_enter_and_the_flips_count() -> None:
    rated: list[tuple[str, str, int]] = []
    app = host(rated)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RatingChecklistScreen))
        screen = app.screen
        assert isinstance(screen, RatingChecklistScreen)
        await pilot.press("space", "down", "space", "j", "space", "down", "space")  # all 4 of Q1
        await pilot.press("down", "space", "up", "k", "down", "down")  # the check held too
        await pilot.pause()
        assert rated == [] and app.dismissed == []  # flipping and moving rate nothing
        assert "On enter, no card is rated." in str(screen.query_one("#ratings").render())
        first = str(screen.query_one("#item-0-0").render())
        assert "(flipped; the matcher proposed blank)" in first
        await pilot.press("k", "space")  # back to Q1's last item: unticked again, 3 of 4
        await pilot.pause()
        assert rated == []
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.dismissed))
    assert rated == [("llm-zero-stages", "llm", 2)]
    assert app.dismissed[0].status == CONFIRMED


@run_async
async def test_n_closes_without_rating() -> None:
    rated: list[tuple[str, str, int]] = []
    app = host(rated)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RatingChecklistScreen))
        await pilot.press("space", "n")
        await until(pilot, lambda: bool(app.dismissed))
    assert rated == [] and app.dismissed[0].status == NOT_RATED


@pytest.mark.parametrize("size", SIZES)
def test_checklist_layout(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def flip_one(pilot) -> None:  # type: ignore[no-untyped-def]
        await until(pilot, lambda: isinstance(pilot.app.screen, RatingChecklistScreen))
        await pilot.press("down", "space")
        await pilot.pause()

    assert snap_compare(host([]), terminal_size=size, run_before=flip_one)

"""A deck file with one bad card: the home screen lists the deck with its good cards, and the
deck notice names where the card was left out (file:line)."""

from __future__ import annotations

from textual.widgets import DataTable

from tests.support.pilot import run_async, settle

PARTLY_BAD = """\
deck: gamma
title: Gamma deck
cards:
  - id: g1
    level: easy
    front: Q1
    back: A1
  - id: g2
    level: extreme
    front: Q2
    back: A2
  - id: g3
    level: easy
    front: Q3
    back: A3
"""


@run_async
async def test_a_bad_card_is_named_and_its_deck_still_loads(make_app, deck_dir) -> None:
    (deck_dir / "gamma.yaml").write_text(PARTLY_BAD)
    app = make_app()
    notices: list[str] = []
    original = app.notify

    def record(message: str, **kwargs) -> None:
        notices.append(message)
        original(message, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#decks", DataTable)
        rows = {str(table.get_row_at(i)[0]): table.get_row_at(i) for i in range(table.row_count)}
        assert str(rows["Gamma deck"][2]) == "2"  # g1 and g3 are new; g2 was left out
        deck_notices = [n for n in notices if "gamma.yaml" in n]
        assert len(deck_notices) == 1
        assert "Left out card(s) with problems at gamma.yaml:9." in deck_notices[0]
        assert "Skipped invalid deck" not in deck_notices[0]

"""One meaning per key across screens: `e` is the exercise (review screen) wherever it is bound;
the card browser opens the deck file on `o` (ctrl+o in its search box)."""

from __future__ import annotations

from textual.binding import Binding

from drill.tui.screens.browser import BrowserScreen
from drill.tui.screens.exercises import ExercisesScreen
from drill.tui.screens.home import HomeScreen
from drill.tui.screens.labs import LabsScreen
from drill.tui.screens.review import ReviewScreen
from drill.tui.screens.stats import StatsScreen


def actions_by_key(screen: type) -> dict[str, str]:
    return {
        key.strip(): binding.action
        for binding in screen.BINDINGS
        if isinstance(binding, Binding)
        for key in binding.key.split(",")
    }


def test_e_is_the_exercise_wherever_it_is_bound() -> None:
    screens = (HomeScreen, ReviewScreen, BrowserScreen, LabsScreen, ExercisesScreen, StatsScreen)
    meanings = {screen.__name__: actions_by_key(screen).get("e") for screen in screens}
    assert meanings["ReviewScreen"] == "exercise"
    assert {m for m in meanings.values() if m is not None} == {"exercise"}


def test_the_browser_opens_the_deck_file_on_o() -> None:
    keys = actions_by_key(BrowserScreen)
    assert keys["o"] == keys["ctrl+o"] == "edit"

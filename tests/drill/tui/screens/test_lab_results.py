"""The results view's tables at 80 columns: a long check or observation name folds onto a
second line instead of being cut with an ellipsis."""

from __future__ import annotations

import copy

from rich.console import Console

from drill.tui.screens.lab_results import checks_table, observations_table
from tests.support.lab_fakes import OK_RESULT


def _render(table: object) -> str:
    console = Console(width=78, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def _column(text: str, index: int) -> str:
    """The cells of one column, joined: a folded name reads whole again."""
    rows = [line.split("│") for line in text.splitlines() if "│" in line]
    return "".join(cells[index].strip() for cells in rows if len(cells) > index)


def test_a_long_check_name_folds_instead_of_being_cut() -> None:
    text = _render(checks_table(OK_RESULT))  # type: ignore[arg-type]
    assert "…" not in text
    assert "grads_identical_across_ranks" in _column(text, 1)


def test_a_long_observation_name_folds_too() -> None:
    result = copy.deepcopy(OK_RESULT)
    name = "modes.fresh_optimizer.first_step_after_resume_loss_ratio_to_uninterrupted"
    result["observations"] = {name: 1.5}
    text = _render(observations_table(result))  # type: ignore[arg-type]
    assert "…" not in text and name in _column(text, 0)

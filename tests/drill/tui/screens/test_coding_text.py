"""The coding round's verdict text (drill.tui.screens.coding_text), from hand-made gradings."""

from __future__ import annotations

from drill.tui.screens.coding_text import verdict_lines
from tests.support.coding import HANG, hung_grading


def test_a_shared_reason_is_shown_once_then_the_checks_it_affects():
    rows = [row.plain for row in verdict_lines(hung_grading())]
    assert sum(HANG in row for row in rows) == 1
    assert rows[:2] == [
        f"reason 1: run w2: {HANG}",
        "  affects 3 checks: distributed.exactly_once, distributed.new_order, "
        "monitoring.named_phases",
    ]
    assert "FAIL distributed.new_order: W=2: reason 1" in rows
    assert rows[-1] == "likely cause: the ranks wait for each other"


def test_the_notebook_panel_says_the_last_save_the_line_count_and_why_it_was_not_read(tmp_path):
    from drill.tui.screens.coding_text import notebook_panel

    missing = notebook_panel(tmp_path / "round.ipynb", "NB", "a\nb\n", "no cell")
    rows = missing.plain.splitlines()
    assert rows[1:5] == ["NB", "", "Last save: never", "train.py from its %%writefile train.py "
                         "cell: 2 lines"]  # fmt: skip
    assert "Not read: no cell" in rows
    (tmp_path / "round.ipynb").write_text("{}")
    read = notebook_panel(tmp_path / "round.ipynb", "NB", "", None).plain
    assert "Last save: never" not in read and "Not read" not in read

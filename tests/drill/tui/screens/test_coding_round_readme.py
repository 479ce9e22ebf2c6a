"""The README's coding-round section documents the screen as it is: every key the screen binds
is in its key table, and the pushback it describes is the one about the candidate's own code."""

from __future__ import annotations

from drill.tui.screens.coding_round import CodingRoundScreen
from tests.support.paths import REPO


def mock_section() -> str:
    """From `## Mock rounds` to the next `## ` heading outside a code block."""
    lines, inside, fenced = [], False, False
    for line in (REPO / "README.md").read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if line.startswith("## ") and not fenced:
            inside = line == "## Mock rounds"
        if inside:
            lines.append(line)
    return "\n".join(lines)


def test_every_key_of_the_coding_screen_is_in_the_readme_key_table():
    table = [line for line in mock_section().splitlines() if line.startswith("| ")]
    keys = " ".join(line.split("|")[1] for line in table)
    for binding in CodingRoundScreen.BINDINGS:
        for key in binding.key.split(","):  # type: ignore[union-attr]
            assert key in keys, f"{key} ({binding.action}) is not in the README's key table"


def test_the_readme_explains_follow_ups_and_the_notebook_round():
    section = " ".join(mock_section().split())
    assert "pushback from hard cards" not in section  # the coding round asks about your code
    assert "## Q1 (" in section and "quoted `>` lines" in section
    assert "`%%writefile train.py`, `%%writefile ./train.py` or `%%file train.py`" in section
    assert "drill mock notebook" in section and "drill mock watch" in section
    for topic in ("**Stretch phases.**", "**The report**", "`no_sync`", "FSDP2"):
        assert topic in section, topic

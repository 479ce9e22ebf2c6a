"""A contract's "How it is graded" table, built from data: phase -> its text (the lines after
the phase name, as printed). The contract prints the table; readers (drill's notebook cells)
take the rows as data and never parse the printed contract."""

from __future__ import annotations

from collections.abc import Mapping


def graded_rows(graded: Mapping[str, str]) -> dict[str, str]:
    """Phase -> its row as printed without the table's indent: the phase name padded to the
    widest name plus two spaces, the text's first line beside it, the rest under it."""
    column = max(len(phase) for phase in graded) + 2
    rows = {}
    for phase, text in graded.items():
        first, *rest = text.splitlines()
        lines = [phase.ljust(column) + first, *(" " * column + line for line in rest)]
        rows[phase] = "\n".join(lines)
    return rows


def graded_table(graded: Mapping[str, str]) -> str:
    """The table as the contract prints it: every row indented by two spaces."""
    return "".join(
        f"  {line}\n" for row in graded_rows(graded).values() for line in row.splitlines()
    )

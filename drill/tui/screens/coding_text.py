"""Text the coding round's screens show: the contract reflowed for a narrow pane, a grading's
verdicts as plain lines (the checks' words come from the user's run: text, never markup), and
the notebook panel."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from textual.content import Content

from drill.runs.checklist import CheckList
from drill.tui.plain import joined, lines, shown
from drill.watched_file import stamp_of


def reflow(text: str) -> str:
    """The contract for a narrow pane: a paragraph's (or a numbered item's) hard-wrapped lines
    joined, so the pane wraps them; indented blocks (the JSON example, the table) kept."""
    out: list[str] = []
    for line in text.splitlines():
        prev = out[-1] if out else ""
        plain = bool(prev.strip()) and not prev.startswith(" ") and not line.startswith(" ")
        item = re.match(r" {5}\S", line) and re.match(r" {2}\d\.| {5}\S", prev)
        if line.strip() and prev.strip() and (plain or item):
            out[-1] = f"{prev} {line.strip()}"
        else:
            out.append(line)
    return "\n".join(out)


def verdict_lines(result: dict) -> list[Content]:
    """A reason several checks share once (with the checks it affects), then one line per check
    and likely cause (drill.runs.checklist reads the result; this colours it)."""
    checks = CheckList.of(result)
    rows = []
    for reason in checks.reasons:
        rows.append(joined((f"{reason.label}:", "yellow"), f" {reason.text}"))
        rows.append(joined(f"  {reason.affects}"))
    for c in checks.checks:
        mark = ("PASS", "green") if c.passed else ("FAIL", "red")
        rows.append(joined(mark, f" {c.name}: {c.detail}"))
    for cause in checks.likely_causes:
        rows.append(joined(("likely cause:", "yellow"), f" {cause}"))
    return rows


def notebook_panel(notebook: Path, label: str, code: str, problem: str | None) -> Content:
    """What a notebook round shows in place of the editor: where to edit (`label` names the
    notebook), its last save, how long its train.py is, and why it was not read (when not)."""
    stamp = stamp_of(notebook)
    saved = datetime.fromtimestamp(stamp[0] / 1e9).strftime("%H:%M:%S") if stamp else "never"
    count = len(code.splitlines())
    rows: list = [
        ("Edit round.ipynb in Jupyter or VS Code; drill watches each save.", "b"),
        shown(label),
        "",
        joined("Last save: ", (saved, "b")),
        joined("train.py from its %%writefile train.py cell: ", (f"{count} lines", "b")),
    ]
    if problem:
        rows.append(joined(("Not read:", "yellow"), " ", problem))
    rows += ["", ("Notes and the follow-up answers go in the notes pane here.", "dim")]
    return lines(rows)

"""Text the coding round's screens show: the contract reflowed for a narrow pane, and a
grading's verdicts as plain lines (the checks' words come from the user's run: text, never
markup)."""

from __future__ import annotations

import re

from textual.content import Content

from drill.runs.checklist import CheckList
from drill.tui.plain import joined


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

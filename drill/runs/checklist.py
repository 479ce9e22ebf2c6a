"""A run's checks as data, and as plain lines: the one check-list renderer. Every run drill shows
(a lab, an exercise, a coding-round grading) has checks {name, passed, detail}; a grading may
also give reasons several checks share (trainer_lab.usercode.verdict.shared_reasons: shown once,
then referred to) and likely causes. Screens turn a CheckList into Rich text
(drill/tui/screens/coding_text.py); the CLI prints `plain_lines`. Check words come from the
user's run: they are text (printable), never markup.

    checks = CheckList.of(result)               # reasons shared once, checks, likely causes
    for line in plain_lines(checks, layout=COLUMNS, indent="  "): say(line)
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from drill.text import printable


@dataclass(frozen=True)
class CheckRow:
    name: str
    passed: bool
    detail: str

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"


@dataclass(frozen=True)
class ReasonRow:
    """A reason two or more failed checks quote: its label ("reason 1"), text and checks."""

    label: str
    text: str
    affects: str


@dataclass(frozen=True)
class CheckList:
    reasons: tuple[ReasonRow, ...]
    checks: tuple[CheckRow, ...]
    likely_causes: tuple[str, ...] = ()

    @property
    def held(self) -> int:
        return sum(1 for c in self.checks if c.passed)

    @classmethod
    def of(cls, result: Mapping[str, Any], *, shared: bool = True) -> CheckList:
        """A result's checks; `shared`: a reason several checks quote given once (a grading's
        result), else every check's detail whole (a lab's, an exercise's)."""
        if shared:
            from trainer_lab.usercode.verdict import shared_reasons  # loads only when shown

            found, checks = shared_reasons(result)
            reasons = tuple(ReasonRow(r.label, r.text, r.affects) for r in found)
        else:
            reasons, checks = (), list(result.get("checks") or [])
        rows = tuple(_row(c) for c in checks if isinstance(c, Mapping))
        observations = result.get("observations") or {}
        causes = observations.get("likely_causes") if isinstance(observations, Mapping) else None
        return cls(reasons, rows, tuple(str(c) for c in causes or ()))

    @classmethod
    def of_checks(cls, checks: list[Mapping[str, Any]]) -> CheckList:
        """Checks alone (a report's failed checks), no shared reasons."""
        return cls((), tuple(_row(c) for c in checks))


def _row(check: Mapping[str, Any]) -> CheckRow:
    return CheckRow(
        str(check.get("name", "")), bool(check.get("passed")), str(check.get("detail", ""))
    )


WIDTH = 100
# COLUMNS: `PASS  name  detail`, names aligned, details wrapped under themselves (drill mock
# grade); LOG: the same on one line each, whitespace folded, with the count (drill mock watch);
# INLINE: `PASS name: detail` (drill lab run, drill exercise check).
Layout = Literal["columns", "log", "inline"]


def wrap(text: str, width: int, **options: str) -> list[str]:
    """Lines of at most `width` where words allow: a word (a path, a term) is never cut in two;
    one longer than the line stands on a line of its own."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False, **options)


def plain_lines(checks: CheckList, layout: Layout = "log", indent: str = "  ") -> list[str]:
    """The check list as plain printable lines: the shared reasons, then one row per check."""
    if layout == "inline":
        return [printable(f"{indent}{c.verdict}{'  ' if indent else ' '}{c.name}: {c.detail}")
                for c in checks.checks]  # fmt: skip
    if layout == "log":
        return _log_lines(checks)
    lines: list[str] = []
    for reason in checks.reasons:
        lines.append(
            "\n".join(wrap(f"{reason.label}: {reason.text}", WIDTH, subsequent_indent="    "))
        )
        lines.append(
            "\n".join(wrap(reason.affects, WIDTH, initial_indent="  ", subsequent_indent="    "))
        )
    width = max((len(c.name) for c in checks.checks), default=0)
    pad = " " * (width + 8)
    for c in checks.checks:
        detail = wrap(c.detail, WIDTH - len(pad)) or [""]
        lines.append(f"{c.verdict:<4}  {c.name:<{width}}  {detail[0]}")
        lines += [pad + line for line in detail[1:]]
    return lines


def _log_lines(checks: CheckList) -> list[str]:
    width = max((len(c.name) for c in checks.checks), default=0)
    lines = []
    for reason in checks.reasons:
        lines.append(printable(f"  {reason.label}: {' '.join(reason.text.split())}"))
        lines.append(printable(f"    {reason.affects}"))
    for c in checks.checks:
        detail = " ".join(c.detail.split())
        lines.append(printable(f"  {c.verdict}  {c.name:<{width}}  {detail}"))
    lines.append(f"  {checks.held}/{len(checks.checks)} checks hold")
    return lines

"""The coding round's report: per round phase the time used and which checks held (with the
grader's evidence), the code as submitted, a Markdown export, and the review cards that the
failed checks point at (fed back once into the review schedule, as text rounds do).

    report = build_report(session)          # reads DRILL_HOME/rounds/<id>/grades/*/result.json
    print(to_markdown(report))
    feed_back(session, report, rate)        # rate(card_id, deck_id, rating); once per round
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drill.mock.coding.session import CODING_PHASES, CodingSession
from drill.mock.report import clock as fmt_clock
from trainer_lab.result import read_result

AGAIN = 1
FEEDBACK_FILE = "feedback.json"

# Check -> the bundled review cards that teach what it tests (tests/drill/mock/coding checks
# that every id exists in decks/*.yaml).
SAMPLER_CARDS = ("map-sampler-state-correctness",)
RESUME_CARDS = ("llm-resume-after-crash", "hard-resume-correctness", "llm-checkpoint-contents")
MONITORING_CARDS = ("map-step-phases", "cheat-rank-aware-logging")
CHECK_CARDS: dict[str, tuple[str, ...]] = {
    "skeleton.exits": ("map-skeleton-phase",),
    "skeleton.json_lines": ("map-skeleton-phase",),
    "skeleton.loss_falls": ("map-skeleton-phase", "llm-batch-step-epoch"),
    "distributed.exactly_once": SAMPLER_CARDS,
    "distributed.new_order": SAMPLER_CARDS,
    "distributed.params_in_sync": ("llm-ddp-gradient-allreduce",),
    "distributed.rank0_prints": ("cheat-rank-aware-logging",),
    "restart.resumes_at_checkpoint": RESUME_CARDS,
    "restart.no_replay_or_skip": (*SAMPLER_CARDS, "llm-resume-after-crash"),
    "restart.matches_uninterrupted": ("hard-resume-bitwise-drift", "llm-resume-optimizer-state"),
    "restart.single_writer": ("hard-checkpoint-atomicity",),
    "torn.previous_checkpoint_used": ("hard-checkpoint-atomicity",),
    "torn.finishes": ("hard-checkpoint-atomicity",),
    "monitoring.named_phases": MONITORING_CARDS,
    "monitoring.phases_add_up": MONITORING_CARDS,
}
PHASE_CARDS = {"skeleton": ("map-skeleton-phase",), "distributed": SAMPLER_CARDS,
               "restart": RESUME_CARDS, "torn": ("hard-checkpoint-atomicity",),
               "monitoring": MONITORING_CARDS}  # fmt: skip


def cards_for(check_name: str) -> tuple[str, ...]:
    """The cards a failed check rates (by name, else by its grader phase, the part before '.')."""
    return CHECK_CARDS.get(check_name) or PHASE_CARDS.get(check_name.split(".", 1)[0], ())


@dataclass(frozen=True)
class PhaseReport:
    title: str
    used_s: float
    budget_s: float
    checks: list[dict[str, Any]] = field(default_factory=list)  # {"name","passed","detail"}


@dataclass(frozen=True)
class CodingReport:
    round_id: int
    finish_reason: str | None
    phases: list[PhaseReport]
    code: str
    grades: int  # how many gradings ran

    @property
    def checks(self) -> list[dict[str, Any]]:
        return [c for p in self.phases for c in p.checks]

    def failed_cards(self) -> list[str]:
        """Card ids linked to the failed checks, each once, in check order."""
        seen: dict[str, None] = {}
        for c in self.checks:
            if not c["passed"]:
                seen.update(dict.fromkeys(cards_for(c["name"])))
        return list(seen)


def _round_phase_of(grader_phase: str) -> int:
    """The first round phase whose work that grader phase checks (pushback re-checks all)."""
    for i, phase in enumerate(CODING_PHASES):
        if grader_phase in phase.grades:
            return i
    return len(CODING_PHASES) - 1


def latest_checks(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Check name -> its verdict in the latest grading that ran it."""
    latest: dict[str, dict[str, Any]] = {}
    for result in results:
        for c in result.get("checks") or []:
            if isinstance(c, dict) and isinstance(c.get("name"), str):
                latest[c["name"]] = {
                    "name": c["name"],
                    "passed": bool(c.get("passed")),
                    "detail": str(c.get("detail", "")),
                }
    return latest


def grade_results(folder: Path) -> list[dict[str, Any]]:
    """The round's grading results in the order they ran (unreadable ones skipped)."""
    grades = folder / "grades"
    if not grades.is_dir():
        return []
    numbers = sorted(int(p.name) for p in grades.iterdir() if p.name.isdigit())
    found = (read_result(grades / str(n)) for n in numbers)
    return [dict(r) for r in found if r is not None]


def build_report(
    session: CodingSession, results: list[dict[str, Any]] | None = None
) -> CodingReport:
    results = grade_results(session.folder) if results is None else results
    clock = session.clock
    phases = [
        PhaseReport(p.title, clock.state.used_s[i], clock.budgets_s[i], [])
        for i, p in enumerate(CODING_PHASES)
    ]
    for name, verdict in latest_checks(results).items():
        phases[_round_phase_of(name.split(".", 1)[0])].checks.append(verdict)
    return CodingReport(
        round_id=session.round_id,
        finish_reason=clock.state.finish_reason,
        phases=phases,
        code=session.code(),
        grades=len(results),
    )


def to_markdown(report: CodingReport) -> str:
    checks = report.checks
    held = sum(1 for c in checks if c["passed"])
    used = sum(p.used_s for p in report.phases)
    budget = sum(p.budget_s for p in report.phases)
    lines = [
        f"# Coding round {report.round_id}",
        "",
        f"- Time used: {fmt_clock(used)} of {fmt_clock(budget)}",
        f"- Checks held: {held}/{len(checks)} (from {report.grades} grading runs)",
    ]
    if report.finish_reason:
        lines.append(f"- Ended: {report.finish_reason}")
    for phase in report.phases:
        lines += [
            "",
            f"## {phase.title} ({fmt_clock(phase.used_s)} of {fmt_clock(phase.budget_s)})",
        ]
        for c in phase.checks:
            mark = "x" if c["passed"] else " "
            lines.append(f"- [{mark}] `{c['name']}`: {c['detail']}")
        if not phase.checks and phase is not report.phases[-1]:
            lines.append("- (nothing graded in this phase)")
    cards = report.failed_cards()
    if cards:
        lines += ["", "## Fed back to review", "", *(f"- {c}" for c in cards)]
    fence = "````" if "```" in report.code else "```"
    lines += ["", "## train.py as submitted", "", f"{fence}python", report.code.rstrip("\n"), fence]
    return "\n".join(lines) + "\n"


def feed_back(
    session: CodingSession,
    report: CodingReport,
    rate: Callable[[str, str, int], None],
    deck_of: Callable[[str], str],
) -> list[str]:
    """Rate the failed checks' cards Again, once per round (a marker file remembers it)."""
    marker = session.folder / FEEDBACK_FILE
    if marker.exists() or not report.grades:
        return []
    cards = report.failed_cards()
    rated = []
    for card_id in cards:
        try:
            deck_id = deck_of(card_id)
        except KeyError:  # a card no longer in the decks: nothing to rate
            continue
        rate(card_id, deck_id, AGAIN)
        rated.append(card_id)
    marker.write_text(json.dumps({"rated": rated}))
    return rated

"""The coding round's report: per round phase the time used, which checks held (with the
grader's evidence) and the rubric the notes are read against (pre-checked by drill.mock.coverage,
pushback cards included), the notes and the code as submitted, a Markdown export, and the review
cards that the failed checks and the weakly covered pushback cards point at (fed back once into
the review schedule, as text rounds do).

    report = build_report(session)          # reads DRILL_HOME/rounds/<id>/grades/*/result.json
    print(to_markdown(report))
    feed_back(session, report, rate)        # rate(card_id, deck_id, rating); once per round
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from drill.mock.coding.session import CODING_PHASES, CodingSession
from drill.mock.coverage import Coverage, cover
from drill.mock.grading import feedback_rating
from drill.mock.report import clock as fmt_clock
from trainer_lab.result import Check, LabResult, read_result

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
class RubricPrompt:
    """A prompt of the talk track and how the notes cover each of its rubric bullets."""

    text: str
    bullets: list[tuple[str, str]]  # (bullet, Coverage value)
    card_id: str | None = None
    deck_id: str | None = None

    def rating(self) -> int | None:
        """The text round's rule: None all covered, Hard at least half, Again otherwise."""
        return feedback_rating([status == Coverage.COVERED for _, status in self.bullets])


@dataclass(frozen=True)
class PhaseReport:
    title: str
    used_s: float
    budget_s: float
    checks: list[Check] = field(default_factory=list)
    rubric: list[RubricPrompt] = field(default_factory=list)  # the notes against the talk track


@dataclass(frozen=True)
class CodingReport:
    round_id: int
    finish_reason: str | None
    phases: list[PhaseReport]
    code: str
    grades: int  # how many gradings ran
    notes: str = ""

    @property
    def checks(self) -> list[Check]:
        return [c for p in self.phases for c in p.checks]

    def failed_cards(self) -> list[str]:
        """Card ids linked to the failed checks, each once, in check order."""
        seen: dict[str, None] = {}
        for c in self.checks:
            if not c["passed"]:
                seen.update(dict.fromkeys(cards_for(c["name"])))
        return list(seen)

    def pushback_ratings(self) -> list[tuple[str, str, int]]:
        """(card id, deck id, rating) for the pushback cards the notes did not cover."""
        found = []
        for phase in self.phases:
            for prompt in phase.rubric:
                rating = prompt.rating()
                if prompt.card_id and prompt.deck_id and rating is not None:
                    found.append((prompt.card_id, prompt.deck_id, rating))
        return found


def notes_coverage(session: CodingSession, notes: str) -> list[list[RubricPrompt]]:
    """Per round phase, the notes read against its talk-track rubric."""
    from drill.mock.coding.talk import notes_rubric

    rubric = notes_rubric(session)
    cards = {" ".join(str(c.get("text", "")).split()): c for c in session.pushback}
    found = []
    for phase in CODING_PHASES:
        prompts = []
        for text, bullets in rubric.get(phase.id, []):
            card = cards.get(text) if phase.id == "pushback" else None
            covered = [(c.bullet, c.status.value) for c in cover(notes, bullets)]
            prompts.append(
                RubricPrompt(
                    text,
                    covered,
                    card.get("card_id") if card else None,
                    card.get("deck_id") if card else None,
                )
            )
        found.append(prompts)
    return found


def _round_phase_of(grader_phase: str) -> int:
    """The first round phase whose work that grader phase checks (pushback re-checks all)."""
    for i, phase in enumerate(CODING_PHASES):
        if grader_phase in phase.grades:
            return i
    return len(CODING_PHASES) - 1


def latest_checks(results: list[LabResult]) -> dict[str, Check]:
    """Check name -> its verdict in the latest grading that ran it."""
    return {c["name"]: c for result in results for c in result["checks"]}


def grade_results(folder: Path) -> list[LabResult]:
    """The round's grading results in the order they ran (unreadable or off-contract ones
    skipped)."""
    grades = folder / "grades"
    if not grades.is_dir():
        return []
    numbers = sorted(int(p.name) for p in grades.iterdir() if p.name.isdigit())
    found = (read_result(grades / str(n)) for n in numbers)
    return [r for r in found if r is not None]


def build_report(session: CodingSession, results: list[LabResult] | None = None) -> CodingReport:
    results = grade_results(session.folder) if results is None else results
    clock = session.clock
    notes = session.notes()
    rubric = notes_coverage(session, notes)
    phases = [
        PhaseReport(p.title, clock.state.used_s[i], clock.budgets_s[i], [], rubric[i])
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
        notes=notes,
    )


MARKS = {Coverage.COVERED.value: "x", Coverage.PARTIAL.value: "~", Coverage.MISSED.value: " "}


def _fenced(text: str, language: str) -> list[str]:
    fence = "`" * max(3, 1 + max((len(run) for run in _backtick_runs(text)), default=0))
    return [f"{fence}{language}", text.rstrip("\n"), fence]


def _backtick_runs(text: str) -> list[str]:
    import re

    return re.findall(r"`+", text)


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
        for prompt in phase.rubric:
            card = f" (card {prompt.card_id})" if prompt.card_id else ""
            lines += ["", f"Notes rubric{card}: {prompt.text}", ""]
            lines += [f"- [{MARKS[status]}] {bullet}" for bullet, status in prompt.bullets]
    cards = report.failed_cards()
    pushback = [(c, r) for c, _deck, r in report.pushback_ratings()]
    if cards or pushback:
        lines += ["", "## Fed back to review", "", *(f"- {c} (Again)" for c in cards)]
        lines += [f"- {c} ({'Again' if r == AGAIN else 'Hard'}, pushback)" for c, r in pushback]
    lines += ["", "## Notes as submitted", "", *_fenced(report.notes, "text")]
    lines += ["", "## train.py as submitted", "", *_fenced(report.code, "python")]
    return "\n".join(lines) + "\n"


def feed_back(
    session: CodingSession,
    report: CodingReport,
    rate: Callable[[str, str, int], None],
    deck_of: Callable[[str], str],
) -> list[str]:
    """Rate the failed checks' cards Again and the pushback cards the notes left uncovered by the
    text round's rule, once per round (a marker file remembers it)."""
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
    for card_id, deck_id, rating in report.pushback_ratings():
        if card_id not in rated:
            rate(card_id, deck_id, rating)
            rated.append(card_id)
    marker.write_text(json.dumps({"rated": rated}))
    return rated

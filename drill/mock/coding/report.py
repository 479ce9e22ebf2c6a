"""The coding round's report: per round phase the time used, which checks held (with the
grader's evidence), the rubric the notes are read against (pre-checked by drill.mock.coverage),
the code as it stood when the phase ended, the pushback's follow-up questions with the answers
and their rubric verdicts, and the model answer's part for the phase with a walk-through; then
the notes and the code as submitted, a Markdown export, and the review cards fed back once.

Only what the round examined is rated: the cards of a check that ran and failed (Again), and
the cards of a follow-up that was answered (by the text round's rule); a question left
unanswered rates nothing. Each goes through the rule for ratings from outside review
(drill.review.outside): a card never reviewed is not rated, one not due is logged only; the
report says per card what happened (feedback.json keeps it).

    report = build_report(session)          # reads DRILL_HOME/rounds/<id>/grades/*/result.json
    print(to_markdown(report))
    # feeding back to review goes through the checklist the person confirms (confirm.py)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from drill.mock.coding.check_facts import was_run
from drill.mock.coding.phases import CodingPhase
from drill.mock.coding.pushback import answers, without_questions
from drill.mock.coding.session import CodingSession
from drill.mock.coding.stretch import STRETCH_MINUTES, stretch_phases
from drill.mock.coding.stretch import title as stretch_title
from drill.mock.coding.stretch import used as stretch_used
from drill.mock.coding.walkthrough import ModelPart, model_part
from drill.mock.coverage import Coverage, cover, credit
from drill.mock.report import clock as fmt_clock
from drill.mock.report import finish_text
from drill.mock.rubric_bands import HARD
from drill.review.ratings import RATING_NAMES
from trainer_lab.result import Check, LabResult

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
        """None all covered, Hard at least half (a partial bullet counts half), Again otherwise."""
        return coverage_rating([status for _, status in self.bullets])


def coverage_rating(statuses: list[str]) -> int | None:
    """The text round's rule on an unconfirmed checklist: None when every bullet is covered,
    Hard when the bullets are worth at least half (a partial one counts half), else Again."""
    if not statuses or all(status == Coverage.COVERED for status in statuses):
        return None
    return HARD if credit(statuses) * 2 >= len(statuses) else AGAIN


@dataclass(frozen=True)
class FollowUpVerdict:
    """A pushback question about the candidate's code, the answer written under its heading
    and how that answer covers the question's rubric."""

    number: int
    question: str
    kind: str  # failed | what-if | from-code (drill.mock.coding.followups)
    evidence: str
    answer: str
    bullets: list[tuple[str, str]]  # (rubric item, Coverage value); empty when unanswered
    cards: tuple[str, ...]

    @property
    def answered(self) -> bool:
        return bool(self.answer.strip())

    def rating(self) -> int | None:
        """None when unanswered (not examined) or fully covered; else Hard or Again."""
        if not self.answered:
            return None
        return coverage_rating([status for _, status in self.bullets])


@dataclass(frozen=True)
class PhaseReport:
    title: str
    used_s: float
    budget_s: float
    checks: list[Check] = field(default_factory=list)
    rubric: list[RubricPrompt] = field(default_factory=list)  # the notes against the talk track
    phase_id: str = ""
    code: str | None = None  # train.py when the phase ended (None: it has not ended)
    followups: list[FollowUpVerdict] = field(default_factory=list)
    model: ModelPart | None = None


@dataclass(frozen=True)
class CodingReport:
    round_id: int
    finish_reason: str | None
    phases: list[PhaseReport]
    code: str
    grades: int  # how many gradings ran
    notes: str = ""
    fed_back: list[str] | None = None  # per card, what feeding back did (None: not yet)

    @property
    def checks(self) -> list[Check]:
        return [c for p in self.phases for c in p.checks]

    @property
    def followups(self) -> list[FollowUpVerdict]:
        return [f for p in self.phases for f in p.followups]

    def failed_cards(self) -> list[str]:
        """Card ids linked to the checks that ran and failed (a check its grading did not run
        examined nothing), each once, in check order."""
        seen: dict[str, None] = {}
        for c in self.checks:
            if not c["passed"] and was_run(c):
                seen.update(dict.fromkeys(cards_for(c["name"])))
        return list(seen)

    def followup_ratings(self) -> list[tuple[str, int]]:
        """(card id, rating) for the cards of the answered follow-ups the answer did not fully
        cover; a card two questions link gets the lower rating."""
        found: dict[str, int] = {}
        for question in self.followups:
            rating = question.rating()
            if rating is None:
                continue
            for card in question.cards:
                found[card] = min(rating, found.get(card, rating))
        return list(found.items())


def notes_coverage(session: CodingSession, notes: str) -> list[list[RubricPrompt]]:
    """Per round phase, the notes read against its talk-track rubric."""
    from drill.mock.coding.talk import notes_rubric

    rubric = notes_rubric(session)
    written = without_questions(notes)
    found = []
    for phase in session.phases:
        prompts = []
        for text, bullets in rubric.get(phase.id, []):
            covered = [(c.bullet, c.status.value) for c in cover(written, bullets)]
            prompts.append(RubricPrompt(text, covered))
        found.append(prompts)
    return found


def followup_verdicts(session: CodingSession, notes: str) -> list[FollowUpVerdict]:
    """The round's follow-up questions, each with its answer read against its own rubric."""
    questions = session.pushback
    written = answers(notes, len(questions))
    found = []
    for number, (q, answer) in enumerate(zip(questions, written, strict=True), 1):
        rubric = [str(item) for item in q.get("rubric") or []]
        bullets = [(c.bullet, c.status.value) for c in cover(answer, rubric)] if answer else []
        found.append(
            FollowUpVerdict(
                number=number,
                question=str(q.get("question", "")),
                kind=str(q.get("kind", "")),
                evidence=str(q.get("evidence", "")),
                answer=answer,
                bullets=bullets or [(item, Coverage.MISSED.value) for item in rubric],
                cards=tuple(str(c) for c in q.get("cards") or []),
            )
        )
    return found


def _round_phase_of(grader_phase: str, phases: tuple[CodingPhase, ...]) -> int:
    """The first round phase whose work that grader phase checks (pushback re-checks all)."""
    for i, phase in enumerate(phases):
        if grader_phase in phase.grades:
            return i
    return len(phases) - 1


def latest_checks(results: list[LabResult]) -> dict[str, Check]:
    """Check name -> its verdict in the latest grading that ran it."""
    return {c["name"]: c for result in results for c in result["checks"]}


def grade_results(folder: Path) -> list[LabResult]:
    """The round's grading results in the order they ran (unreadable, unbounded or
    off-contract ones skipped: drill.mock.coding.regrade reads them with a bound)."""
    from drill.mock.coding.regrade import gradings

    return [result for _, result in gradings(folder)]


def build_report(session: CodingSession, results: list[LabResult] | None = None) -> CodingReport:
    results = grade_results(session.folder) if results is None else results
    clock = session.clock
    notes = session.notes()
    rubric = notes_coverage(session, notes)
    # the model answer split by phase: today's DDP round's, or the round's prompt's own
    model = None if session.prompt.id == "ddp" else session.prompt.entry.model_answer()
    phases = [
        PhaseReport(
            p.title,
            clock.state.used_s[i],
            clock.budgets_s[i],
            [],
            rubric[i],
            phase_id=p.id,
            code=session.phase_code(p.id),
            followups=followup_verdicts(session, notes) if p.id == "pushback" else [],
            model=model_part(p.id, model),
        )
        for i, p in enumerate(session.phases)
    ]
    offered = stretch_phases()
    stretch_checks: dict[str, list[Check]] = {}
    for name, verdict in latest_checks(results).items():
        family = name.split(".", 1)[0]
        if family in offered:
            stretch_checks.setdefault(family, []).append(verdict)
        else:
            phases[_round_phase_of(family, session.phases)].checks.append(verdict)
    times = stretch_used(session)
    for phase_id in offered:
        if phase_id in stretch_checks or phase_id in times:
            phases.append(
                PhaseReport(
                    f"Stretch: {stretch_title(phase_id)}",
                    times.get(phase_id, 0.0),
                    STRETCH_MINUTES * 60.0 * session.scale,
                    stretch_checks.get(phase_id, []),
                    phase_id=phase_id,
                    code=session.phase_code(phase_id),
                    model=model_part(phase_id),
                )
            )
    return CodingReport(
        round_id=session.round_id,
        finish_reason=clock.state.finish_reason,
        phases=phases,
        code=session.code(),
        grades=len(results),
        notes=notes,
        fed_back=fed_back(session),
    )


def fed_back(session: CodingSession) -> list[str] | None:
    """What feeding the round back to review did, per card (None: not fed back yet, or a
    marker this version cannot read)."""
    from drill.files import read_regular

    try:
        marker = json.loads(read_regular(session.folder / FEEDBACK_FILE, 1 << 20))
    except (OSError, ValueError):  # FileRefused is a ValueError, a bad JSON text too
        return None
    lines = marker.get("changes") if isinstance(marker, dict) else None
    if not isinstance(lines, list):
        return None
    return [str(line) for line in lines]


MARKS = {Coverage.COVERED.value: "x", Coverage.PARTIAL.value: "~", Coverage.MISSED.value: " "}


def _fenced(text: str, language: str) -> list[str]:
    fence = "`" * max(3, 1 + max((len(run) for run in _backtick_runs(text)), default=0))
    return [f"{fence}{language}", text.rstrip("\n"), fence]


def _backtick_runs(text: str) -> list[str]:
    import re

    return re.findall(r"`+", text)


def _phase_markdown(phase: PhaseReport, previous_code: str | None) -> list[str]:
    lines = ["", f"## {phase.title} ({fmt_clock(phase.used_s)} of {fmt_clock(phase.budget_s)})"]
    if phase.checks:
        lines += ["", "Checks:", ""]
        for c in phase.checks:
            mark = "x" if c["passed"] else " "
            lines.append(f"- [{mark}] `{c['name']}`: {c['detail']}")
    elif phase.phase_id not in ("clarify", "pushback"):
        lines += ["", "- (nothing graded in this phase)"]
    for prompt in phase.rubric:
        lines += ["", f"Notes rubric: {prompt.text}", ""]
        lines += [f"- [{MARKS[status]}] {bullet}" for bullet, status in prompt.bullets]
    for q in phase.followups:
        lines += ["", f"### Follow-up Q{q.number} ({q.kind})", "", q.question]
        if q.evidence:
            lines += ["", f"Evidence: {q.evidence}"]
        if q.answered:
            lines += ["", "Your answer:", "", *_fenced(q.answer, "text"), ""]
            lines += [f"- [{MARKS[status]}] {bullet}" for bullet, status in q.bullets]
            rating = q.rating()
            verdict = "all covered" if rating is None else RATING_NAMES.get(rating, str(rating))
            lines += ["", f"Verdict: {verdict} (cards: {', '.join(q.cards)})"]
        else:
            lines += ["", "Not answered (nothing rated). A good answer states:", ""]
            lines += [f"- {bullet}" for bullet, _ in q.bullets]
    if phase.phase_id not in ("clarify", "pushback"):
        lines += ["", "Your code when the phase ended:", ""]
        if phase.code is None:
            lines.append("- (the phase did not end)")
        elif phase.code == previous_code:
            lines.append("- (unchanged since the previous phase)")
        else:
            lines += _fenced(phase.code, "python")
    if phase.model is not None and (phase.model.code or phase.model.walkthrough):
        lines += ["", "The model answer's part:", "", phase.model.walkthrough]
        if phase.model.code:
            lines += ["", *_fenced(phase.model.code, "python")]
    return lines


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
    if report.finish_reason:  # "ended early (F10)", not "Ended: ended"
        said = finish_text(report.finish_reason)
        lines.append(f"- {said[:1].upper()}{said[1:]}")
    previous: str | None = None
    for phase in report.phases:
        lines += _phase_markdown(phase, previous)
        previous = phase.code if phase.code is not None else previous
    lines += _linked_cards(report)
    lines += ["", "## Notes as submitted", "", *_fenced(report.notes, "text")]
    lines += ["", "## train.py as submitted", "", *_fenced(report.code, "python")]
    return "\n".join(lines) + "\n"


def _why(report: CodingReport) -> dict[str, str]:
    """Card id -> why the round rates it: a failed check, a follow-up, or both."""
    why = dict.fromkeys(report.failed_cards(), "a failed check")
    for card_id, _rating in report.followup_ratings():
        why[card_id] = "a failed check and a follow-up" if card_id in why else "a follow-up"
    return why


def _ratings(report: CodingReport) -> dict[str, int]:
    ratings: dict[str, int] = dict.fromkeys(report.failed_cards(), AGAIN)
    for card_id, rating in report.followup_ratings():
        ratings[card_id] = min(rating, ratings.get(card_id, rating))
    return ratings


def _linked_cards(report: CodingReport) -> list[str]:
    ratings = _ratings(report)
    if not ratings and not report.fed_back:
        return []
    lines = ["", "## Linked review cards", ""]
    if report.fed_back is not None:  # what feeding back did, card by card
        lines += [f"- {line}" for line in report.fed_back] or ["- (no card was rated)"]
        return lines
    why = _why(report)
    lines += [f"- {card}: {RATING_NAMES.get(r, r)} when fed back ({why[card]})"
              for card, r in ratings.items()]  # fmt: skip
    note = ("(Not fed back to review yet: a card that is due is rescheduled, one not due is "
            "logged only, one you never reviewed is not rated.)")  # fmt: skip
    return [*lines, "", note]

"""The text rounds' rubric bands: a score's band from the confirmed rubric checklist, and which
cards go back to review (the coding round's grader is trainer_lab.grading).

A prompt's score is the fraction of its rubric bullets checked; a phase's and the round's score
weigh every bullet equally. A card the user answered whose rubric was not fully covered is fed
back into review: rated Hard when at least half of its bullets were checked, Again otherwise. A
prompt left unanswered examined nothing: it scores zero but its card is not rated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from drill.mock.report import BulletResult, PhaseResult, PromptResult, RoundReport

BANDS: tuple[tuple[float, str], ...] = (
    (0.85, "strong"),
    (0.65, "solid"),
    (0.40, "developing"),
    (0.0, "weak"),
)
AGAIN, HARD = 1, 2


def band(score: float) -> str:
    for floor, name in BANDS:
        if score >= floor:
            return name
    return BANDS[-1][1]


def feedback_rating(checked: list[bool]) -> int | None:
    """None when every bullet was covered; Hard when at least half were; Again otherwise."""
    if not checked or all(checked):
        return None
    return HARD if sum(checked) * 2 >= len(checked) else AGAIN


@dataclass(frozen=True)
class GradedPrompt:
    """One prompt with the user's confirmed checklist (inputs to the report)."""

    phase_index: int
    key: str
    text: str
    answer: str
    rubric: list[str]
    auto: list[str]  # coverage status per bullet
    checked: list[bool]
    card_id: str | None = None
    deck_id: str | None = None


@dataclass(frozen=True)
class PhaseInfo:
    id: str
    title: str
    budget_s: float
    used_s: float


def _score(checked: list[bool]) -> float:
    return sum(checked) / len(checked) if checked else 0.0


def build_report(
    *,
    round_id: int,
    round_key: str,
    title: str,
    started_at: datetime,
    finished_at: datetime,
    finish_reason: str | None,
    phases: list[PhaseInfo],
    prompts: list[GradedPrompt],
) -> RoundReport:
    phase_results: list[PhaseResult] = []
    all_checked: list[bool] = []
    for index, info in enumerate(phases):
        results: list[PromptResult] = []
        phase_checked: list[bool] = []
        for p in (p for p in prompts if p.phase_index == index):
            phase_checked += p.checked
            results.append(
                PromptResult(
                    key=p.key,
                    text=p.text,
                    answer=p.answer,
                    card_id=p.card_id,
                    deck_id=p.deck_id,
                    bullets=[
                        BulletResult(text=t, auto=a, checked=c)
                        for t, a, c in zip(p.rubric, p.auto, p.checked, strict=True)
                    ],
                    score=_score(p.checked),
                    band=band(_score(p.checked)),
                    feedback_rating=(
                        feedback_rating(p.checked) if p.card_id and p.answer.strip() else None
                    ),
                )
            )
        all_checked += phase_checked
        phase_results.append(
            PhaseResult(
                id=info.id,
                title=info.title,
                budget_s=info.budget_s,
                used_s=info.used_s,
                score=_score(phase_checked),
                band=band(_score(phase_checked)),
                prompts=results,
            )
        )
    return RoundReport(
        round_id=round_id,
        round_key=round_key,
        title=title,
        started_at=started_at,
        finished_at=finished_at,
        finish_reason=finish_reason,
        total_budget_s=sum(p.budget_s for p in phases),
        total_used_s=sum(p.used_s for p in phases),
        score=_score(all_checked),
        band=band(_score(all_checked)),
        phases=phase_results,
    )

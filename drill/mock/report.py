"""The report of a graded round: a pydantic model (stored as JSON) and its Markdown export."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from drill.review.ratings import RATING_NAMES


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BulletResult(_Model):
    text: str
    auto: str  # coverage found in the typed answer: covered | partial | missed
    checked: bool  # as confirmed by the user


class PromptResult(_Model):
    key: str
    text: str
    answer: str
    card_id: str | None = None
    deck_id: str | None = None
    bullets: list[BulletResult]
    score: float  # fraction of bullets checked
    band: str
    feedback_rating: int | None = None  # rating given to the card in review (1 Again, 2 Hard)
    # what that rating did to the card (CardChange.describe(): "x: new, not rated"); None when
    # nothing was fed back (no rater, or a report stored before this was recorded)
    feedback: str | None = None


class PhaseResult(_Model):
    id: str
    title: str
    budget_s: float
    used_s: float
    score: float
    band: str
    prompts: list[PromptResult]


class RoundReport(_Model):
    round_id: int
    round_key: str
    title: str
    started_at: datetime
    finished_at: datetime
    finish_reason: str | None
    total_budget_s: float
    total_used_s: float
    score: float
    band: str
    phases: list[PhaseResult]

    def weak_cards(self) -> list[tuple[str, int]]:
        """(card id, rating) of every card fed back into review."""
        return [
            (p.card_id, p.feedback_rating)
            for phase in self.phases
            for p in phase.prompts
            if p.card_id is not None and p.feedback_rating is not None
        ]

    def to_markdown(self) -> str:
        lines = [
            f"# Mock round {self.round_id}: {self.title}",
            "",
            f"- Played: {self.started_at:%Y-%m-%d %H:%M} UTC, {finish_text(self.finish_reason)}",
            f"- Overall: **{self.band}** ({self.score:.0%} of rubric points)",
            f"- Time used: {clock(self.total_used_s)} of {clock(self.total_budget_s)}",
            "",
            "| Phase | Band | Score | Time used | Budget |",
            "| --- | --- | --- | --- | --- |",
        ]
        for phase in self.phases:
            over = " (over)" if phase.used_s > phase.budget_s + 0.5 else ""
            lines.append(
                f"| {phase.title} | {phase.band} | {phase.score:.0%} | "
                f"{clock(phase.used_s)}{over} | {clock(phase.budget_s)} |"
            )
        for phase in self.phases:
            lines += ["", f"## {phase.title}", ""]
            for prompt in phase.prompts:
                source = f" (card `{prompt.card_id}`)" if prompt.card_id else ""
                lines += [f"### {_one_line(prompt.text)}{source}", ""]
                answer = prompt.answer.strip()
                if answer:
                    lines += [f"> {line}" if line else ">" for line in answer.splitlines()]
                else:
                    lines.append("_(no answer typed)_")
                lines.append("")
                for bullet in prompt.bullets:
                    mark = "x" if bullet.checked else " "
                    hint = "" if bullet.auto == "covered" else f" _(auto: {bullet.auto})_"
                    lines.append(f"- [{mark}] {bullet.text}{hint}")
                if prompt.feedback is not None:
                    lines += ["", f"Fed back to review: {prompt.feedback}."]
                elif prompt.feedback_rating is not None:
                    name = RATING_NAMES[prompt.feedback_rating]
                    lines += ["", f"Graded **{name}** (not fed back to review)."]
                elif prompt.card_id and not answer:
                    lines += ["", "Not answered: the card is not rated."]
                lines.append("")
        return "\n".join(lines).rstrip() + "\n"


def clock(seconds: float) -> str:
    """Seconds as m:ss (or -m:ss)."""
    sign = "-" if seconds < 0 else ""
    whole = round(abs(seconds))
    return f"{sign}{whole // 60}:{whole % 60:02d}"


def _one_line(text: str) -> str:
    """A prompt as one heading line, whole: a heading cut short loses the question."""
    return " ".join(text.split())


FINISH_TEXTS = {
    "time": "ended when the time ran out",
    "completed": "ended after the last phase",
    "ended": "ended early (F10)",
}


def finish_text(reason: str | None) -> str:
    """How a round ended, as words ("time" -> "ended when the time ran out")."""
    return FINISH_TEXTS.get(reason or "", f"ended ({reason or 'unknown'})")


_MINUTES_IN_TITLE = re.compile(r"\(\s*\d+(?:\.\d+)?\s*min\s*\)")


def round_title(title: str, total_budget_s: float) -> str:
    """The title with its "(N min)" made the round's real length (`--minutes 2` -> "(2 min)")."""
    minutes = total_budget_s / 60.0
    length = (
        f"({minutes:.0f} min)" if abs(minutes - round(minutes)) < 0.05 else f"({minutes:.1f} min)"
    )
    return _MINUTES_IN_TITLE.sub(length, title)

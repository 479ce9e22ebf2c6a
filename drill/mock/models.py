"""Pydantic models of mock-round definitions (decks/round-*.yaml): pure data, no widgets.

A round is a list of phases; each phase has a time budget and prompts. A prompt is either written
inline (text + rubric) or drawn from the decks: one card by id, or `count` cards picked by tags.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from drill.decks.models import Identifier, Level

Minutes = Annotated[float, Field(gt=0, le=600)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InlinePrompt(_Strict):
    """A prompt written in the round file itself (e.g. the four pre-coding questions)."""

    id: Identifier
    text: Annotated[str, StringConstraints(min_length=1)]
    rubric: list[str] = Field(min_length=1)


class CardPick(_Strict):
    """Cards drawn from the decks: `card` names one card; otherwise `count` cards whose tags
    intersect `tags` (any of them), optionally only of one `level`."""

    card: Identifier | None = None
    tags: list[str] = Field(default_factory=list)
    level: Level | None = None
    count: int = Field(default=1, ge=1, le=20)

    @model_validator(mode="after")
    def _one_way(self) -> CardPick:
        if self.card is None and not self.tags and self.level is None:
            raise ValueError("a pick needs `card`, or `tags` and/or `level`")
        if self.card is not None and (self.tags or self.level is not None or self.count != 1):
            raise ValueError("`card` names one card; do not combine it with tags/level/count")
        return self


class PhaseDef(_Strict):
    id: Identifier
    title: str
    minutes: Minutes
    focus: str = ""  # what the interviewer expects in this phase, shown under the title
    prompts: list[InlinePrompt] = Field(default_factory=list)
    picks: list[CardPick] = Field(default_factory=list)

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @model_validator(mode="after")
    def _has_prompts(self) -> PhaseDef:
        if not self.prompts and not self.picks:
            raise ValueError(f"phase {self.id!r} has neither prompts nor picks")
        return self


class RoundDef(_Strict):
    round: Identifier
    title: str
    description: str = ""
    auto_advance: bool = True  # move to the next phase when a phase's time is up
    phases: list[PhaseDef] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> RoundDef:
        seen: set[str] = set()
        for phase in self.phases:
            if phase.id in seen:
                raise ValueError(f"duplicate phase id {phase.id!r}")
            seen.add(phase.id)
            prompt_ids = [p.id for p in phase.prompts]
            if len(prompt_ids) != len(set(prompt_ids)):
                raise ValueError(f"duplicate prompt id in phase {phase.id!r}")
        return self

    @property
    def total_minutes(self) -> float:
        return sum(p.minutes for p in self.phases)

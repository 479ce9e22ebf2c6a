"""Pydantic models of the YAML deck format. No widget or storage imports: pure data."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

Level = Literal["easy", "medium", "hard"]
Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]
ParamValue = int | float | bool | str


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PredictChoice(_Strict):
    text: str
    when: str  # a claim over the lab's observations; exactly one choice must hold

    _text_not_blank = field_validator("text", "when")(_non_blank)


class Predict(_Strict):
    ask: str
    choices: list[PredictChoice] = Field(min_length=2)

    _ask_not_blank = field_validator("ask")(_non_blank)


class LabLink(_Strict):
    run: str  # a lab name from trainer_lab's catalogue
    params: dict[str, ParamValue] = Field(default_factory=dict)
    world_size: int | None = Field(default=None, ge=1, le=64)
    expect: list[str] = Field(default_factory=list)  # claims, see drill.claims.grammar
    # A claim over the observations naming where the expect claims and the predict block apply
    # (e.g. `device == cpu`); where it does not hold, they are skipped, and verify says so.
    where: str = ""

    @field_validator("params")
    @classmethod
    def _finite_params(cls, params: dict[str, ParamValue]) -> dict[str, ParamValue]:
        for name, value in params.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{name}: {value!r} is not a finite number")
        return params


class Card(_Strict):
    id: Identifier
    level: Level
    tags: list[str] = Field(default_factory=list)
    front: str
    back: str
    more: str = ""  # a longer explanation, shown on demand after the back
    rubric: list[str] = Field(default_factory=list)
    replaces: list[Identifier] = Field(default_factory=list)  # merged ids; their history follows
    lab: LabLink | None = None
    predict: Predict | None = None
    exercise: Identifier | None = None  # an exercise from trainer_lab.exercises' catalogue

    _text_not_blank = field_validator("front", "back")(_non_blank)

    def content_hash(self) -> str:
        """Hash of what the learner sees; an edit changes it, the id (and history) stays."""
        payload = json.dumps(
            {"front": self.front, "back": self.back, "rubric": self.rubric}, sort_keys=True
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class Deck(_Strict):
    deck: Identifier
    title: str
    description: str = ""
    cards: list[Card] = Field(default_factory=list)

    _title_not_blank = field_validator("title")(_non_blank)

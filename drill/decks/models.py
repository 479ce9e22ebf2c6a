"""Pydantic models of the YAML deck format. No widget or storage imports: pure data."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from drill.decks import numbers as numbers_engine

Level = Literal["easy", "medium", "hard"]
Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]
ParamValue = int | float | bool | str
CHECKED_DRAWINGS = 16  # drawings of a numbers card computed when it loads


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


class NumberVar(_Strict):
    """A variable of a numbers card: `choices`, or a range `min`..`max` in `step`s."""

    min: float | None = None
    max: float | None = None
    step: float | None = None
    choices: list[float] = Field(default_factory=list, max_length=100)
    unit: str = ""


class Numbers(_Strict):
    """A card whose numbers are drawn per review (drill.decks.numbers has the formula language)."""

    vars: dict[str, NumberVar]
    let: dict[str, str] = Field(default_factory=dict)  # named steps of the worked solution
    answer: str
    unit: str = ""
    tolerance: float = Field(default=0.1, gt=0, le=1)  # relative error that counts as right

    @model_validator(mode="after")
    def _computes(self) -> Numbers:
        try:  # parses every formula, then computes a few drawings to the end (seed 0 first)
            spec = numbers_engine.spec_from(self.model_dump(mode="json"))
            for seed in range(CHECKED_DRAWINGS):
                numbers_engine.draw(spec, seed)
        except numbers_engine.NumbersError as error:
            raise ValueError(str(error)) from None
        return self


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
    numbers: Numbers | None = None  # a numbers card: `{name}`s in the text are filled per review

    _text_not_blank = field_validator("front", "back")(_non_blank)

    @model_validator(mode="after")
    def _known_placeholders(self) -> Card:
        if self.numbers is None:
            return self
        spec = numbers_engine.spec_from(self.numbers.model_dump(mode="json"))
        for key in ("front", "back", "more"):
            unknown = numbers_engine.placeholders(getattr(self, key)) - spec.names()
            if unknown:
                raise ValueError(f"{key} names {{{sorted(unknown)[0]}}}, not a numbers value")
        return self

    def content_hash(self) -> str:
        """Hash of what the learner sees; an edit changes it, the id (and history) stays."""
        shown: dict[str, object] = {"front": self.front, "back": self.back, "rubric": self.rubric}
        if self.numbers is not None:  # only here: the other cards' hashes (and history) stay
            shown["numbers"] = self.numbers.model_dump(mode="json")
        payload = json.dumps(shown, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class Deck(_Strict):
    deck: Identifier
    title: str
    description: str = ""
    cards: list[Card] = Field(default_factory=list)

    _title_not_blank = field_validator("title")(_non_blank)

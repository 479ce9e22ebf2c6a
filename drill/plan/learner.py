"""A simulated learner for drill.plan.simulate: the "true" memory of each card, evolving by the
FSRS-6 memory model with the learner's own parameters, and the time each answer takes.

The scheduler never sees this: it sees only the ratings (and durations) the learner gives, and
schedules with its own (default) parameters, as the app does for a user who never ran
`drill optimize`. Recall at a review is drawn from the true retrievability at that moment
(elapsed time in real, fractional days); on success the rating is Hard, Good or Easy with fixed
odds, on failure Again. A card's first view has no memory yet: its rating is drawn from the
first-rating odds.

The FSRS-6 formulas are written out here (the fsrs package's are private); the tests check
them against the fsrs package's own review_card. A review less than a day after the previous
one uses FSRS-6's short-term stability, as the model does for a same-day review.

Parameter sets (PARAMETER_SETS):
  default          the fsrs package's FSRS-6 defaults (fsrs.scheduler.DEFAULT_PARAMETERS),
                   the same the scheduler uses: a learner the defaults describe exactly;
  fast-forgetter   tests/support/synthetic_reviews.true_parameters(): low initial stabilities
                   (0.1, 0.5, 1.2, 4.0 days) and a smaller recall-stability gain (w8 = 1.3),
                   the learner the optimizer benchmark fits;
  slow-forgetter   hand-made opposite: initial stabilities x2 and w8 = 2.1 (memory grows
                   faster than the defaults assume);
  steep-decay      hand-made: the default stabilities with FSRS-6's decay w20 = 0.5 (the
                   forgetting curve falls faster between reviews than the scheduler models).
None of these is a real user's fit: they bracket the defaults on both sides, so the benchmark
shows what a mismatch between the scheduler's model and the learner does.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final

from fsrs.scheduler import DEFAULT_PARAMETERS

Parameters = tuple[float, ...]

MIN_STABILITY: Final = 0.001
MIN_DIFFICULTY: Final = 1.0
MAX_DIFFICULTY: Final = 10.0


def _with(changes: dict[int, float]) -> Parameters:
    values = list(DEFAULT_PARAMETERS)
    for index, value in changes.items():
        values[index] = value
    return tuple(values)


PARAMETER_SETS: Final[dict[str, Parameters]] = {
    "default": tuple(DEFAULT_PARAMETERS),
    "fast-forgetter": _with({0: 0.1, 1: 0.5, 2: 1.2, 3: 4.0, 8: 1.3}),
    "slow-forgetter": _with({i: 2 * DEFAULT_PARAMETERS[i] for i in range(4)} | {8: 2.1}),
    "steep-decay": _with({20: 0.5}),
}

# the odds (Again, Hard, Good, Easy) of a first view and (Hard, Good, Easy) of a recalled card:
# fsrs-rs's simulator defaults (fsrs_rs_python.default_simulator_config()), rounded
FIRST_RATING_ODDS: Final = (0.24, 0.094, 0.495, 0.171)
SUCCESS_RATING_ODDS: Final = (0.224, 0.631, 0.145)

TYPICAL_SECONDS: Final = (15.0, 25.0)  # a learner's typical answer time is drawn in this range
FIRST_VIEW_FACTOR: Final = 1.5  # reading a card for the first time takes longer
MIN_SECONDS, MAX_SECONDS = 2.0, 300.0  # the clamp storage applies to measured answer times


@dataclass(slots=True)
class Memory:
    """One card's true memory state: stability (days), difficulty, last review (in days)."""

    stability: float
    difficulty: float
    last_review: float


def decay_of(params: Parameters) -> float:
    return params[20]


def retrievability(memory: Memory | None, at: float, params: Parameters) -> float:
    """The probability of recall at `at` (days on the simulation's clock); 0 for a card never
    seen."""
    if memory is None:
        return 0.0
    decay = decay_of(params)
    factor = 0.9 ** (-1 / decay) - 1
    elapsed = max(0.0, at - memory.last_review)
    return (1 + factor * elapsed / memory.stability) ** -decay


def _initial_difficulty(params: Parameters, rating: int) -> float:
    return params[4] - math.exp(params[5] * (rating - 1)) + 1


def _clamp_difficulty(value: float) -> float:
    return min(max(value, MIN_DIFFICULTY), MAX_DIFFICULTY)


def _next_difficulty(params: Parameters, difficulty: float, rating: int) -> float:
    delta = -params[6] * (rating - 3)
    damped = difficulty + (10.0 - difficulty) * delta / 9.0
    reverted = params[7] * _initial_difficulty(params, 4) + (1 - params[7]) * damped
    return _clamp_difficulty(reverted)


def _short_term_stability(params: Parameters, stability: float, rating: int) -> float:
    increase = math.exp(params[17] * (rating - 3 + params[18])) * stability ** -params[19]
    if rating >= 2:
        increase = max(increase, 1.0)
    return max(stability * increase, MIN_STABILITY)


def _recall_stability(params: Parameters, d: float, s: float, r: float, rating: int) -> float:
    hard = params[15] if rating == 2 else 1.0
    easy = params[16] if rating == 4 else 1.0
    gain = math.exp(params[8]) * (11 - d) * s ** -params[9] * (math.exp((1 - r) * params[10]) - 1)
    return s * (1 + gain * hard * easy)


def _forget_stability(params: Parameters, d: float, s: float, r: float) -> float:
    long_term = (
        params[11] * d ** -params[12] * ((s + 1) ** params[13] - 1) * math.exp((1 - r) * params[14])
    )
    return min(long_term, s / math.exp(params[17] * params[18]))


def remember(memory: Memory | None, rating: int, at: float, params: Parameters) -> Memory:
    """The true memory after a review rated `rating` at `at` (days)."""
    if memory is None:
        stability = max(params[rating - 1], MIN_STABILITY)
        difficulty = _clamp_difficulty(_initial_difficulty(params, rating))
        return Memory(stability, difficulty, at)
    s, d = memory.stability, memory.difficulty
    if at - memory.last_review < 1.0:
        stability = _short_term_stability(params, s, rating)
    else:
        r = retrievability(memory, at, params)
        if rating == 1:
            stability = _forget_stability(params, d, s, r)
        else:
            stability = _recall_stability(params, d, s, r, rating)
    return Memory(max(stability, MIN_STABILITY), _next_difficulty(params, d, rating), at)


@dataclass
class Learner:
    """A simulated person: true FSRS-6 parameters, a random source, and answer times."""

    params: Parameters
    rng: random.Random
    typical_seconds: float
    card_factor: dict[str, float]

    @classmethod
    def make(cls, params: Parameters, seed: int, card_ids: list[str]) -> Learner:
        rng = random.Random(seed)
        typical = rng.uniform(*TYPICAL_SECONDS)
        factors = {card_id: rng.lognormvariate(0.0, 0.3) for card_id in card_ids}
        return cls(params, rng, typical, factors)

    def rating(self, memory: Memory | None, at: float) -> int:
        """The rating given at a review at `at`: drawn from the first-view odds for a card
        never seen, else recall drawn from the true retrievability (Again on failure)."""
        if memory is None:
            return self.rng.choices((1, 2, 3, 4), weights=FIRST_RATING_ODDS)[0]
        if self.rng.random() >= retrievability(memory, at, self.params):
            return 1
        return self.rng.choices((2, 3, 4), weights=SUCCESS_RATING_ODDS)[0]

    def answer_seconds(self, card_id: str, first_view: bool) -> float:
        """How long this answer takes: the learner's typical time x the card's own factor x a
        per-answer spread; a first view longer."""
        seconds = self.typical_seconds * self.card_factor.get(card_id, 1.0)
        seconds *= self.rng.lognormvariate(0.0, 0.2) * (FIRST_VIEW_FACTOR if first_view else 1.0)
        return min(max(seconds, MIN_SECONDS), MAX_SECONDS)

"""The simulator behind benchmarks/interview_plan.py: its learner model and its bookkeeping
(not the plan's targets: those are benchmark results)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Card, Rating, Scheduler

from drill.plan import simulate as sim
from drill.plan.learner import PARAMETER_SETS, Memory, remember, retrievability

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
NO_AREAS: dict[str, tuple[str, ...]] = {}


@pytest.fixture(scope="module")
def cards() -> sim.SimCards:
    return sim.bundled_cards()


@pytest.fixture
def perfect(monkeypatch: pytest.MonkeyPatch) -> str:
    """A learner who never forgets: initial stabilities of a million days."""
    values = list(PARAMETER_SETS["default"])
    values[0:4] = [1e6] * 4
    monkeypatch.setitem(PARAMETER_SETS, "perfect", tuple(values))
    return "perfect"


@pytest.mark.parametrize("name", sorted(PARAMETER_SETS))
def test_true_memory_follows_the_fsrs_package(name: str) -> None:
    """The learner's FSRS-6 formulas give the fsrs package's memory state for every rating
    sequence at whole-day gaps (where the package's elapsed days equal ours)."""
    params = PARAMETER_SETS[name]
    scheduler = Scheduler(parameters=params, enable_fuzzing=False, learning_steps=())
    ratings = [3, 1, 2, 4, 3, 1, 3]
    gaps = [0, 3, 1, 7, 20, 2, 5]
    card, memory, now = Card(card_id=1), None, START
    for rating, gap in zip(ratings, gaps, strict=True):
        now += timedelta(days=gap)
        card, _ = scheduler.review_card(card, Rating(rating), now)
        memory = remember(memory, rating, sim.days_since_start(now), params)
        assert memory.stability == pytest.approx(card.stability, rel=1e-9)
        assert memory.difficulty == pytest.approx(card.difficulty, rel=1e-9)


def test_retrievability_is_the_fsrs6_curve() -> None:
    params = PARAMETER_SETS["default"]
    memory = Memory(stability=10.0, difficulty=5.0, last_review=2.0)
    assert retrievability(memory, 12.0, params) == pytest.approx(0.9)  # R(S) = 0.9
    assert retrievability(memory, 2.0, params) == 1.0
    assert retrievability(None, 12.0, params) == 0.0


def test_a_learner_with_perfect_memory_scores_one(cards: sim.SimCards, perfect: str) -> None:
    """Enough days and minutes to introduce every card at 20 a day: recall 1.0."""
    days = -(-len(cards.card_ids) // 20) + 1
    result = sim.simulate(sim.Scenario("fsrs", days, 600, perfect), cards, NO_AREAS)
    assert result.never_introduced == 0
    assert result.recall == pytest.approx(1.0, abs=1e-4)


def test_a_card_never_introduced_counts_zero(cards: sim.SimCards, perfect: str) -> None:
    """One day of plain FSRS introduces 20 cards; the other 178 count 0."""
    result = sim.simulate(sim.Scenario("fsrs", 1, 600, perfect), cards, NO_AREAS)
    total = len(cards.card_ids)
    assert result.never_introduced == total - 20
    assert result.recall == pytest.approx(20 / total, abs=1e-4)


def test_topic_recall_is_the_mean_over_the_cards_with_its_tags(cards: sim.SimCards) -> None:
    tag = cards.tags[cards.card_ids[0]][0]
    areas = {"one-tag": (tag,), "nothing": ("no-such-tag",)}
    result = sim.simulate(sim.Scenario("fsrs", 3, 45), cards, areas)
    assert set(result.per_area) == {"one-tag"}  # an area without cards is left out
    assert 0.0 < result.per_area["one-tag"] <= 1.0


def test_seeds_reproduce(cards: sim.SimCards) -> None:
    scenario = sim.Scenario("fsrs", 5, 30, "fast-forgetter", seed=3)
    first, again = sim.simulate(scenario, cards, NO_AREAS), sim.simulate(scenario, cards, NO_AREAS)
    assert (first.recall, first.days) == (again.recall, again.days)
    other = sim.simulate(sim.Scenario("fsrs", 5, 30, "fast-forgetter", seed=4), cards, NO_AREAS)
    assert other.days != first.days


def test_the_budget_stops_a_day(cards: sim.SimCards) -> None:
    """Five minutes a day: the learner stops with cards left, at the first card after the
    budget is reached; without stopping the same day goes on."""
    stopped = sim.simulate(sim.Scenario("fsrs", 1, 5), cards, NO_AREAS).days[0]
    assert stopped.seconds >= 5 * 60
    assert stopped.left > 0
    full = sim.simulate(sim.Scenario("fsrs", 1, 5, stop_at_budget=False), cards, NO_AREAS)
    assert full.days[0].left == 0
    assert full.days[0].reviews > stopped.reviews
    assert full.worst_over_budget > 0.10


def test_plain_fsrs_introduces_twenty_a_day_in_deck_order(cards: sim.SimCards) -> None:
    run = sim._Run(sim.Scenario("fsrs", 1, 600), cards, NO_AREAS)
    run.run()
    introduced = [cid for cid in cards.card_ids if run.states[cid] is not None]
    assert introduced == cards.card_ids[:20]


def test_fsrs_rs_cross_check_runs() -> None:
    """fsrs-rs's simulator: with a whole day of budget and 10 days, every card is introduced
    and recall on day 10 is near the 0.9 plain FSRS aims for."""
    recall = sim.fsrs_rs_baseline(198, 10, 600, seed=1, seconds=20.0)
    assert 0.8 < recall < 1.0
    assert sim.fsrs_rs_baseline(198, 1, 600, seed=1, seconds=20.0) <= 20 / 198 + 1e-6


@pytest.mark.parametrize("policy", sim.POLICIES)
def test_a_quick_run_of_each_policy_completes(cards: sim.SimCards, policy: str) -> None:
    result = sim.simulate(sim.Scenario(policy, 7, 30), cards)
    assert len(result.days) == 7
    assert 0.0 < result.recall <= 1.0
    assert result.per_area
    assert sum(d.new for d in result.days) == len(cards.card_ids) - result.never_introduced

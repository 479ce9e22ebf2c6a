"""Short of budget (the plan cannot introduce every card: pacing.fitted_to_budget), reviews get
SHORT_REVIEW_SHARE of the day and new cards the rest: a card never introduced counts 0 on the
date, so on 30-minute budgets plain FSRS (whose learner leaves reviews undone at the budget)
beat a plan that gave reviews the whole day (issue 33; benchmarks/RESULTS-plan.md)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from drill.review.balance import review_capacity
from drill.review.deadline import DEFAULT_DECAY, Deadline
from drill.review.pacing import PLANNED_SHARE, SHORT_REVIEW_SHARE, fitted_to_budget

ZONE = ZoneInfo("Europe/Berlin")
DAY = date(2026, 3, 31)


def test_short_of_budget_reviews_get_a_smaller_share_of_the_day() -> None:
    values = {f"c{i:04}": 1.0 for i in range(1000)}  # far more than 30 minutes a day introduce
    plan = Deadline(DAY, 0.9, 30, values, DEFAULT_DECAY, seconds_per_review=20.0)
    fitted = fitted_to_budget(plan, {}, datetime(2026, 3, 19, 9, tzinfo=ZONE), 4, ZONE)
    assert fitted.short_of_budget and fitted.final_pass_days == 0
    per_review = 1.25 * 20.0
    assert review_capacity(fitted) == int(SHORT_REVIEW_SHARE * 1800 / per_review)
    assert review_capacity(plan) == int(PLANNED_SHARE * 1800 / per_review)
    assert review_capacity(fitted) < review_capacity(plan)
    # a plan without a final pass that is not short keeps the planned share
    assert review_capacity(replace(plan, final_pass_days=0)) == review_capacity(plan)
    roomy = fitted_to_budget(plan, {}, datetime(2026, 3, 19, 9, tzinfo=ZONE) - timedelta(days=300),
                             4, ZONE)  # fmt: skip
    assert not roomy.short_of_budget

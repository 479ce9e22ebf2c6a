"""The lab panel's after-run summary (drill/tui/screens/lab_panel.py shows it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from drill.review.ratings import RATING_NAMES
from drill.tui.plain import joined

if TYPE_CHECKING:
    from drill.decks.models import Card
    from drill.labs.controller import LabOutcome


def outcome_text(card: Card | None, outcome: LabOutcome, took_s: float) -> Content:
    """The after-run summary: status, prediction vs observation, claims, rating. Lab output
    and deck text are shown as text (drill.tui.plain), never as markup."""
    checks = outcome.result["checks"]
    passed = sum(1 for c in checks if c["passed"])
    colour = {"ok": "green", "failed": "yellow"}.get(outcome.status, "red")
    lines = [
        joined(
            (outcome.status, f"b {colour}"), f" · checks {passed}/{len(checks)} · {took_s:.1f} s"
        )
    ]
    if outcome.error:
        lines.append(joined((outcome.error, "red")))
    if outcome.out_of_scope:
        lines.append(joined((f"Claims skipped: {outcome.out_of_scope}", "yellow")))
    if card is not None and card.predict is not None:
        choices = card.predict.choices
        observed = (
            choices[outcome.observed_choice].text
            if outcome.observed_choice is not None
            else ("not decided: " + ", ".join(choices[i].text for i in outcome.holding))
            if outcome.holding
            else "not observed"
        )
        if outcome.prediction is not None:
            guess = choices[outcome.prediction.choice].text
            verdict = {True: ("right", "green"), False: ("wrong", "red"), None: "not scored"}[
                outcome.right
            ]
            certainty = outcome.prediction.certainty
            lines.append(joined(f"You predicted: {guess} ({certainty} certainty)"))
            lines.append(joined(f"Observed:      {observed}  → ", verdict))
        else:
            lines.append(joined(f"Observed: {observed}"))
    for claim in outcome.claims:
        mark = ("✓ held", "green") if claim.passed else ("✗ did not hold", "red")
        detail = "" if claim.passed else f" ({claim.detail})"
        lines.append(joined(mark, f"  {claim.claim}{detail}"))
    if card is not None:
        if outcome.suggested_rating is not None:
            name = RATING_NAMES[outcome.suggested_rating]
            lines.append(
                joined(
                    "Suggested rating: ",
                    (name, "b"),
                    f" ({outcome.suggested_rating}) · enter accepts · 1-4 rate otherwise",
                )
            )
        else:
            lines.append(joined("No suggested rating · 1-4 rate the card · escape leaves unrated"))
    return Content("\n").join(lines)

"""The README's test command is the one CI runs, and the deck format it documents is complete."""

from __future__ import annotations

from pathlib import Path

from drill.deck_models import Card, Deck, LabLink, Predict, PredictChoice

ROOT = Path(__file__).resolve().parents[2]


def test_readme_test_command_is_exactly_ci() -> None:
    ci_command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci_command.startswith("pip install torch==2.13.0")
    assert f"\n{ci_command}\n" in (ROOT / "README.md").read_text()


def test_readme_documents_every_deck_field() -> None:
    text = (ROOT / "README.md").read_text()
    for model in (Deck, Card, LabLink, Predict, PredictChoice):
        for name in model.model_fields:
            assert f"{name}:" in text, f"{model.__name__}.{name} is not documented"

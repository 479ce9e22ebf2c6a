"""Builders shared by the lab panel and labs list screen tests."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from drill.decks.models import Card
from drill.labs.controller import Prediction
from drill.labs.service import LabRunService
from drill.tui.screens.lab_panel import LabPanelScreen
from tests.support.lab_fakes import CARD_YAML, OK_RESULT, FakeRunner


def make_panel(card: Card, db: Any, runner: FakeRunner, tmp_path: Path) -> LabPanelScreen:
    """The lab panel over a fake runner, with a clock that advances half a second a call."""
    ticks = itertools.count()
    return LabPanelScreen(LabRunService(
        card, "deck-a", db=db, runner=runner, runs_root=tmp_path / "runs",
        clock=lambda: float(next(ticks)) * 0.5,
    ))  # fmt: skip


def seen_long_ago(db: Any, card: Card, deck_id: str = "deck-a", now: datetime | None = None) -> int:
    """Review `card` once, 60 days before `now` (default: the real clock), so that it is due:
    a rating from outside review rates only a card reviewed before (drill.review.outside).
    Returns how many review rows that wrote (1), for tests that count the rows after it."""
    from drill.review.scheduler import rate_card
    from drill.times import utc_now

    moment = (now or utc_now()) - timedelta(days=60)
    rate_card(db, card.id, deck_id, 3, content_hash=card.content_hash(), now=moment)
    return 1


def one_card_decks(tmp_path: Path) -> Path:
    """A decks folder holding one deck with the lab-linked card of tests.support.lab_fakes."""
    decks = tmp_path / "decks"
    decks.mkdir()
    deck = {"deck": "d", "title": "D", "cards": [yaml.safe_load(CARD_YAML)]}
    (decks / "d.yaml").write_text(yaml.safe_dump(deck))
    return decks


def record_lab_run(
    db: Any,
    card: Card | None,
    run_dir: Path,
    started: datetime,
    took_s: float | None = 6.25,
    *,
    prediction: Prediction | None = None,
    **details: Any,  # deck_id, predicted
) -> int:
    """A ddp-baseline run (params steps=4, W=2) of OK_RESULT, in the run log as the lab panel
    records it (drill.runs.recorder); `took_s` None leaves it `running`. Returns its id."""
    from drill.labs.controller import score_outcome
    from drill.labs.runs import summarize
    from drill.runs.log import LAB
    from drill.runs.recorder import finish_run, start_run

    certainty = prediction.certainty if prediction is not None else None
    card_id = card.id if card is not None else None
    run_id = start_run(db, LAB, "ddp-baseline", {"steps": 4}, 2, run_dir, started,
                       card_id=card_id, certainty=certainty, **details)  # fmt: skip
    if took_s is not None:
        outcome = score_outcome(card, OK_RESULT, prediction)
        finish_run(db, run_id, outcome.status, took_s, summarize(outcome),
                   prediction_right=outcome.right,
                   suggested_rating=outcome.suggested_rating)  # fmt: skip
    return run_id

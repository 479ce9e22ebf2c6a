"""Fixtures for the lab TUI tests: a throwaway DRILL_HOME, a card linked to a lab, fake runners."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from drill.deck_models import Card

CARD_YAML = """
id: ddp-equals-single
level: medium
front: Does DDP at W ranks train like one process on the global batch?
back: Yes, within float rounding; gradients are identical on every rank.
lab:
  run: ddp-baseline
  params: {steps: 4}
  world_size: 2
  expect: ["max_rel_loss_diff <= 1e-5", "weights_identical_across_ranks == true"]
predict:
  ask: After the all-reduce, the gradients on the ranks are ...
  choices:
    - {text: bit-identical, when: "grad_mismatch_steps == 0"}
    - {text: slightly different, when: "grad_mismatch_steps > 0"}
"""

OK_RESULT: dict[str, Any] = {
    "lab": "ddp-baseline",
    "status": "ok",
    "observations": {
        "max_rel_loss_diff": 1.2e-7,
        "weights_identical_across_ranks": True,
        "grad_mismatch_steps": 0,
        "steps": 4,
    },
    "checks": [
        {"name": "losses_match", "passed": True, "detail": "max rel diff 1.2e-07"},
        {"name": "grads_identical_across_ranks", "passed": True, "detail": "4/4 steps"},
    ],
    "duration_s": 1.5,
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("DRILL_HOME", str(path))
    monkeypatch.delenv("DRILL_DECKS", raising=False)
    return path


@pytest.fixture
def card() -> Card:
    return Card.model_validate(yaml.safe_load(CARD_YAML))


@pytest.fixture
def db(home: Path) -> Iterator[Any]:
    from drill.paths import database_path
    from storage.db import open_database

    database = open_database(database_path())
    yield database
    database.close()


@dataclass
class Event:
    done: int
    total: int
    message: str


class FakeRunner:
    """Stands in for run_lab: emits progress events, then waits on `release` (or the cancel
    Event) before writing result.json and returning. Nothing is timed: the test decides when."""

    def __init__(self, result: dict[str, Any] | None = None, steps: int = 4) -> None:
        self.result = dict(result or OK_RESULT)
        self.steps = steps
        self.release = threading.Event()
        self.emitted = threading.Event()
        self.calls: list[dict[str, Any]] = []

    def __call__(
        self,
        name: str,
        params: dict[str, Any],
        world_size: int,
        out_dir: Path,
        timeout_s: float | None,
        on_progress: Callable[[Any], None],
        cancel: threading.Event,
    ) -> dict[str, Any]:
        self.calls.append({"name": name, "params": params, "world_size": world_size})
        on_progress(Event(0, 1, f"launching {name} on {world_size} ranks"))
        for step in range(1, self.steps + 1):
            on_progress(Event(0, 1, f"{name}: step {step}"))
        on_progress(Event(1, 1, f"{name} finished in 1.0 s"))
        self.emitted.set()
        while not self.release.wait(0.01):
            if cancel.is_set():
                return {"lab": name, "status": "cancelled", "error": {"message": "cancelled"}}
        out_dir.mkdir(parents=True, exist_ok=True)
        result = {**self.result, "params": params, "world_size": world_size}
        (out_dir / "result.json").write_text(json.dumps(result))
        rank0 = out_dir / "events-rank0.jsonl"
        rank0.write_text(
            "".join(
                json.dumps(
                    {
                        "event": "step",
                        "rank": 0,
                        "step": s,
                        "loss": 1.0 / s,
                        "run": "distributed",
                        "phases": {"forward": 0.001 * s, "backward": 0.002},
                    }
                )
                + "\n"
                for s in range(1, self.steps + 1)
            )
        )
        return result

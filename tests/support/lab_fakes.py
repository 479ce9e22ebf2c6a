"""Fakes for the lab screens and controller: a card linked to a lab, a canned result, a runner
that stands in for run_lab, and a DrillApp over a deck holding that card."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from drill.tui.app import AppOptions, DrillApp

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


NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def drill_app_with_lab_card(tmp_path: Path) -> DrillApp:
    decks = tmp_path / "decks"
    decks.mkdir()
    deck = {"deck": "d", "title": "D", "cards": [yaml.safe_load(CARD_YAML)]}
    (decks / "d.yaml").write_text(yaml.safe_dump(deck))
    options = AppOptions(deck_dirs=[decks], include_bundled=False, now=lambda: NOW)
    return DrillApp(options)

"""Curves worth plotting from a lab's run dir (torch-free, no widgets): loss per step for each
run (resume modes, variants), per-rank median phase times, per-rank memory.

Events come from `events-rank{R}.jsonl` in the run dir and in every `runs/<variant>/` below it
(the lab contract in trainer_lab/README.md).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_lab.events import PHASES, read_run_events
from trainer_lab.result import VARIANTS_DIR

MAX_SERIES = 8  # more lines than this are unreadable in a terminal plot

# plotext colour names (plotext._dict.color_codes; "yellow" is not one and draws uncoloured)
# readable on a dark background, assigned to series in order; no black, grey or terminal
# default. Markers cycle on their own (longer) list, so with more series than colours the
# markers still tell the series apart.
SERIES_COLORS = ("cyan+", "orange+", "green+", "magenta+", "red+", "blue+", "white", "orange")
SERIES_MARKERS = ("braille", "dot", "x", "+", "*", "o", "#", "@", "%", "&")


@dataclass(frozen=True)
class SeriesStyle:
    label: str
    color: str
    marker: str


def series_styles(labels: list[str]) -> list[SeriesStyle]:
    """One distinct (colour, marker) per series, in order."""
    return [
        SeriesStyle(
            label, SERIES_COLORS[i % len(SERIES_COLORS)], SERIES_MARKERS[i % len(SERIES_MARKERS)]
        )
        for i, label in enumerate(labels)
    ]


def ladder_mfu(observations: dict[str, Any]) -> list[tuple[str, float]]:
    """(rung, MFU) in ladder order from an mfu-ladder result; rungs without a number skipped."""
    ladder = observations.get("ladder")
    rungs = observations.get("rungs")
    if not isinstance(ladder, list) or not isinstance(rungs, dict):
        return []
    bars: list[tuple[str, float]] = []
    for rung in ladder:
        entry = rungs.get(rung) if isinstance(rung, str) else None
        mfu = entry.get("mfu") if isinstance(entry, dict) else None
        if isinstance(mfu, int | float) and not isinstance(mfu, bool):
            bars.append((str(rung), float(mfu)))
    return bars


@dataclass
class PlotData:
    # label -> [(step, loss)], one per run label (variant/run), rank 0's view
    losses: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    # rank -> phase -> median seconds per step
    phases: dict[int, dict[str, float]] = field(default_factory=dict)
    # rank -> largest total bytes reported by a `memory` event
    memory: dict[int, float] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.losses or self.phases or self.memory)


def _run_dirs(run_dir: Path) -> list[tuple[str, Path]]:
    found = [("", run_dir)]
    runs = run_dir / VARIANTS_DIR
    if runs.is_dir():
        found.extend((p.name, p) for p in sorted(runs.iterdir()) if p.is_dir())
    return found


def _memory_bytes(event: dict[str, Any]) -> float | None:
    if isinstance(event.get("total"), int | float):
        return float(event["total"])
    numbers = [v for k, v in event.items() if "bytes" in k and isinstance(v, int | float)]
    return float(max(numbers)) if numbers else None


def plot_data(run_dir: Path) -> PlotData:
    data = PlotData()
    phase_samples: dict[int, dict[str, list[float]]] = {}
    for variant, directory in _run_dirs(run_dir):
        events = read_run_events(directory)
        for rank, records in sorted(events.items()):
            for event in records:
                kind = event.get("event")
                if kind == "step":
                    phases = event.get("phases")
                    if isinstance(phases, dict):
                        per_rank = phase_samples.setdefault(rank, {})
                        for name, value in phases.items():
                            if isinstance(value, int | float):
                                per_rank.setdefault(name, []).append(float(value))
                    loss = event.get("loss")
                    if rank == 0 and isinstance(loss, int | float):
                        run = str(event.get("run") or "")
                        label = "/".join(p for p in dict.fromkeys((variant, run)) if p)
                        series = data.losses.setdefault(label or "train", [])
                        series.append((int(event.get("step", len(series) + 1)), float(loss)))
                elif kind == "memory":
                    value = _memory_bytes(event)
                    if value is not None:
                        data.memory[rank] = max(value, data.memory.get(rank, 0.0))
    if len(data.losses) > MAX_SERIES:
        data.losses = dict(list(data.losses.items())[:MAX_SERIES])
    order = {name: i for i, name in enumerate(PHASES)}
    for rank, samples in sorted(phase_samples.items()):
        data.phases[rank] = {
            name: statistics.median(values)
            for name, values in sorted(samples.items(), key=lambda kv: order.get(kv[0], 99))
        }
    return data


def key_observations(observations: dict[str, Any], limit: int = 14) -> list[tuple[str, str]]:
    """Flattened (dotted name, formatted value) pairs, scalars only, in report order."""
    flat: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, bool | str) or value is None:
            flat.append((prefix, str(value)))
        elif isinstance(value, float):
            flat.append((prefix, f"{value:.4g}"))
        elif isinstance(value, int):
            flat.append((prefix, str(value)))
        elif isinstance(value, list):
            text = ", ".join(str(v) for v in value[:6]) + (" …" if len(value) > 6 else "")
            flat.append((prefix, f"[{text}]"))

    walk("", observations)
    return flat[:limit]

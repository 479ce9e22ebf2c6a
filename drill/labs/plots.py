"""Curves worth plotting from a lab's run dir (torch-free, no widgets): loss per step for each
run (resume modes, variants), per-rank median phase times, memory per setup. A plotted series is
the quantity the lab's claims compare, and its label says which (see PlotData).

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


# Labs whose claims compare rank 0's own loss (not the mean over ranks): elastic-restart holds
# rank 0's resumed attempt against rank 0's uncrashed reference.
RANK0_LOSS_LABS = frozenset({"elastic-restart"})

MEMORY_PER_PARAM_TITLE = "bytes per parameter (weights + grads + optimizer), per setup"
MEMORY_TOTAL_TITLE = "largest rank's total (params + grads + optimizer), MiB, per run"


@dataclass
class PlotData:
    """Each series is the quantity a lab's claims compare, labelled by what it is:
    `losses`: label -> [(step, loss)]: per run, the loss of the global batch (the mean over the
    ranks that logged the step: "distributed · mean over 2 ranks"), a lab's own `global_loss`
    where it logs one, or rank 0's loss for a lab that compares rank 0's ("· rank 0");
    `phases`: rank -> phase -> median seconds per step; `memory`: label -> value, in the unit
    `memory_title` names (bytes per parameter per setup, or the largest rank's total per run)."""

    losses: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    phases: dict[int, dict[str, float]] = field(default_factory=dict)
    memory: dict[str, float] = field(default_factory=dict)
    memory_title: str = ""

    @property
    def empty(self) -> bool:
        return not (self.losses or self.phases or self.memory)


def _run_dirs(run_dir: Path) -> list[tuple[str, Path]]:
    found = [("", run_dir)]
    runs = run_dir / VARIANTS_DIR
    if runs.is_dir():
        found.extend((p.name, p) for p in sorted(runs.iterdir()) if p.is_dir())
    return found


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class _LossRun:
    by_step: dict[int, dict[int, float]] = field(default_factory=dict)  # step -> rank -> loss
    global_by_step: dict[int, float] = field(default_factory=dict)  # step -> rank 0's global

    def series(self, rank0_only: bool) -> tuple[str, list[tuple[int, float]]]:
        """(what the values are, [(step, value)])."""
        if self.global_by_step:
            return "global loss", sorted(self.global_by_step.items())
        if rank0_only:
            return "rank 0", [(s, r[0]) for s, r in sorted(self.by_step.items()) if 0 in r]
        ranks = {rank for per_rank in self.by_step.values() for rank in per_rank}
        points = [(s, statistics.fmean(r.values())) for s, r in sorted(self.by_step.items())]
        what = f"mean over {len(ranks)} ranks" if len(ranks) > 1 else "1 process"
        return what, points


def _memory(data: PlotData, label: str, events: list[dict[str, Any]]) -> None:
    """bytes_per_param.total per setup (memory-math's claims), else the largest rank's `total`
    per run (fsdp's: the bytes a rank holds, max over ranks). Other fields are not guessed at."""
    per_param = events[0].get("bytes_per_param")
    total = _number(per_param.get("total")) if isinstance(per_param, dict) else None
    if total is not None:
        data.memory[label] = total
        data.memory_title = MEMORY_PER_PARAM_TITLE
        return
    totals = [t for t in (_number(e.get("total")) for e in events) if t is not None]
    if totals:
        data.memory[label] = max(totals) / 2**20
        data.memory_title = MEMORY_TOTAL_TITLE


def _memory_label(event: dict[str, Any]) -> str:
    parts = [str(event[key]) for key in ("setup", "mode") if event.get(key) is not None]
    if event.get("w") is not None:
        parts.append(f"w{event['w']}")
    return " ".join(parts) or "run"


def plot_data(run_dir: Path, lab: str = "") -> PlotData:
    """The series of `lab`'s run in `run_dir` (its result.json names the lab)."""
    data = PlotData()
    phase_samples: dict[int, dict[str, list[float]]] = {}
    runs: dict[str, _LossRun] = {}
    memory: dict[str, list[dict[str, Any]]] = {}
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
                    loss = _number(event.get("loss"))
                    if loss is not None:
                        run = str(event.get("run") or "")
                        label = "/".join(p for p in dict.fromkeys((variant, run)) if p)
                        found = runs.setdefault(label or "train", _LossRun())
                        step = int(event.get("step", len(found.by_step) + 1))
                        found.by_step.setdefault(step, {})[rank] = loss
                        global_loss = _number(event.get("global_loss"))
                        if rank == 0 and global_loss is not None:
                            found.global_by_step[step] = global_loss
                elif kind == "memory":
                    memory.setdefault(_memory_label(event), []).append(event)
    for label, found in list(runs.items())[:MAX_SERIES]:
        what, points = found.series(lab in RANK0_LOSS_LABS)
        if points:
            data.losses[f"{label} · {what}"] = points
    for label, events in memory.items():
        _memory(data, label, events)
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

"""Series styling of the lab plots: every series its own readable colour and marker."""

from __future__ import annotations

import json
from pathlib import Path

from plotext._dict import color_codes

from drill.labs.plots import (
    MAX_SERIES,
    SERIES_COLORS,
    SERIES_MARKERS,
    ladder_mfu,
    plot_data,
    series_styles,
)
from trainer_lab.events import PHASES

UNREADABLE = {"black", "gray", "gray+", "default"}


def _write_events(directory: Path, runs: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for run in runs:
        for step in (1, 2):
            phases = {name: 0.001 for name in PHASES}
            lines.append(
                {"event": "step", "step": step, "loss": 1.0 / step, "run": run, "phases": phases}
            )
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (directory / "events-rank0.jsonl").write_text(text)


def test_resume_modes_and_phases_get_distinct_readable_colours(tmp_path: Path) -> None:
    modes = [
        "killed",
        "resumed/full",
        "resumed/weights_only",
        "resumed/fresh_optimizer",
        "no_rng",
        "baseline",
    ]
    _write_events(tmp_path, modes)
    data = plot_data(tmp_path)
    for labels in (list(data.losses), list(data.phases[0])):
        assert len(labels) > 1
        styles = series_styles(labels)
        colors = [s.color for s in styles]
        assert len(set(colors)) == len(colors), colors
        assert all(c in color_codes and c not in UNREADABLE for c in colors), colors
        assert len({s.marker for s in styles}) == len(styles)
    assert list(data.phases[0]) == list(PHASES)


def test_palette_is_readable_and_markers_outnumber_colours() -> None:
    assert all(c in color_codes and c not in UNREADABLE for c in SERIES_COLORS)
    assert len(set(SERIES_COLORS)) == len(SERIES_COLORS) >= MAX_SERIES
    labels = [f"s{i}" for i in range(len(SERIES_COLORS) + 2)]
    styles = series_styles(labels)
    assert styles[0].color == styles[len(SERIES_COLORS)].color  # colours ran out...
    assert len({s.marker for s in styles}) == len(styles)  # ...markers still differ
    assert len({(s.color, s.marker) for s in series_styles(["x"] * 40)}) > len(SERIES_MARKERS)


def test_ladder_mfu_in_ladder_order_skipping_rungs_without_numbers() -> None:
    observations = {
        "ladder": ["fp32_eager", "bf16_autocast", "sdpa", "compile"],
        "rungs": {
            "sdpa": {"mfu": 0.3, "tokens_per_s": 9.0},
            "fp32_eager": {"mfu": 0.1},
            "bf16_autocast": {"mfu": 0.2},
            "compile": {"mfu": "n/a"},
        },
    }
    assert ladder_mfu(observations) == [("fp32_eager", 0.1), ("bf16_autocast", 0.2), ("sdpa", 0.3)]
    assert ladder_mfu({}) == []
    assert ladder_mfu({"ladder": "x", "rungs": []}) == []
    assert ladder_mfu({"ladder": [1, None], "rungs": {"1": {"mfu": True}}}) == []

"""Each lab plot draws the quantity its claim compares, labelled by what it is (issue 34): the
series are held against the observations the lab's checks use, on real runs (marker `lab`),
and the rules on hand-written events (fast)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from drill.labs.plots import MEMORY_PER_PARAM_TITLE, MEMORY_TOTAL_TITLE, plot_data
from trainer_lab.api import run_lab


def write_events(directory: Path, rank: int, events: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps({"rank": rank, **e}) + "\n" for e in events)
    (directory / f"events-rank{rank}.jsonl").write_text(lines)


def test_losses_logged_by_several_ranks_plot_their_mean(tmp_path: Path) -> None:
    rank0 = [
        {"event": "step", "step": 1, "loss": 0.789, "run": "distributed"},
        {"event": "step", "step": 1, "loss": 0.7513, "run": "single"},
    ]
    write_events(tmp_path, 0, rank0)
    write_events(tmp_path, 1, [{"event": "step", "step": 1, "loss": 0.7136, "run": "distributed"}])
    data = plot_data(tmp_path, "ddp-baseline")
    assert data.losses == {
        "distributed · mean over 2 ranks": [(1, pytest.approx(0.7513))],
        "single · 1 process": [(1, 0.7513)],
    }


def test_a_logged_global_loss_and_a_rank0_lab(tmp_path: Path) -> None:
    write_events(tmp_path, 0, [{"event": "step", "step": 1, "loss": 1.0, "global_loss": 2.0,
                                "run": "hunt"}])  # fmt: skip
    write_events(tmp_path, 1, [{"event": "step", "step": 1, "loss": 3.0, "run": "hunt"}])
    assert plot_data(tmp_path, "nan-hunt").losses == {"hunt · global loss": [(1, 2.0)]}
    other = tmp_path / "other"
    write_events(other, 0, [{"event": "step", "step": 1, "loss": 1.0, "run": "attempt-1"}])
    write_events(other, 1, [{"event": "step", "step": 1, "loss": 3.0, "run": "attempt-1"}])
    assert plot_data(other, "elastic-restart").losses == {"attempt-1 · rank 0": [(1, 1.0)]}


def test_memory_is_plotted_per_setup_never_guessed_from_other_fields(tmp_path: Path) -> None:
    per_param = {"event": "memory", "setup": "fp32", "bytes_per_param": {"total": 16.0},
                 "saved_activation_bytes": 9e6}  # fmt: skip
    write_events(tmp_path, 0, [per_param])
    data = plot_data(tmp_path, "memory-math")
    assert data.memory == {"fp32": 16.0} and data.memory_title == MEMORY_PER_PARAM_TITLE
    fsdp = tmp_path / "fsdp"
    write_events(fsdp, 0, [{"event": "memory", "mode": "fsdp", "w": 2, "total": 2**20}])
    write_events(fsdp, 1, [{"event": "memory", "mode": "fsdp", "w": 2, "total": 3 * 2**20}])
    data = plot_data(fsdp, "fsdp")
    assert data.memory == {"fsdp w2": 3.0} and data.memory_title == MEMORY_TOTAL_TITLE


# --- real runs: the plotted series against the observation the check uses ---------------------


def series(data: Any, label: str) -> dict[int, float]:
    return dict(data.losses[label])


@pytest.mark.lab
def test_ddp_baseline_plots_the_losses_its_check_compares(tmp_path: Path) -> None:
    result = run_lab("ddp-baseline", {"steps": 4}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result.get("error")
    data = plot_data(tmp_path, "ddp-baseline")
    ddp = series(data, "distributed · mean over 2 ranks")
    single = series(data, "single · 1 process")
    obs = result["observations"]
    assert sorted(ddp) == sorted(single) and len(single) == obs["steps"]
    assert max(abs(ddp[s] - single[s]) for s in single) == pytest.approx(
        obs["max_loss_diff"], abs=1e-12
    )
    assert max(abs(ddp[s] - single[s]) / abs(single[s]) for s in single) <= 1e-5  # the check
    assert single[1] == obs["first_loss"]


@pytest.mark.lab
def test_memory_math_plots_bytes_per_param_per_setup(tmp_path: Path) -> None:
    result = run_lab("memory-math", {}, 1, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result.get("error")
    data = plot_data(tmp_path, "memory-math")
    obs = result["observations"]
    assert data.memory == {
        setup: obs[setup]["bytes_per_param"]["total"]
        for setup in ("fp32", "bf16_autocast", "bf16_pure")
    }


@pytest.mark.lab
def test_elastic_restart_plots_rank0_losses_its_check_compares(tmp_path: Path) -> None:
    result = run_lab("elastic-restart", {}, 2, tmp_path, 90)
    assert result["status"] == "ok", result.get("error")
    data = plot_data(tmp_path, "elastic-restart")
    obs = result["observations"]
    last = series(data, f"attempt-{obs['restarts']} · rank 0")
    reference = series(data, "reference · rank 0")
    assert last[max(last)] == obs["final_loss"]
    assert reference[max(reference)] == obs["reference_final_loss"]


@pytest.mark.lab
def test_nan_hunt_plots_the_global_loss_its_check_reads(tmp_path: Path) -> None:
    result = run_lab("nan-hunt", {}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result.get("error")
    [(label, points)] = plot_data(tmp_path, "nan-hunt").losses.items()
    assert label.endswith("· global loss")
    first_bad = next((s for s, v in points if not math.isfinite(v)), 0)
    assert first_bad == result["observations"]["first_nonfinite_step"]


@pytest.mark.lab
def test_resume_plots_the_mean_losses_its_jump_ratio_divides(tmp_path: Path) -> None:
    result = run_lab("resume", {}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result.get("error")
    data = plot_data(tmp_path, "resume")
    obs = result["observations"]
    k = obs["resume_step"]
    reference = series(data, "killed/uninterrupted · mean over 2 ranks")
    for mode in ("weights_only", "fresh_optimizer"):
        resumed = series(data, f"resumed/{mode} · mean over 2 ranks")
        ratio = max(resumed[s] / reference[s] for s in range(k + 1, k + 4) if s in resumed)
        assert ratio == pytest.approx(obs["modes"][mode]["loss_jump_ratio"], rel=1e-9)

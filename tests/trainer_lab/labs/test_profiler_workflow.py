"""profiler-workflow: the trace names the slow op, shows the host-bound data phase and counts
the .item() calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_trace_finds_the_planted_problems(tmp_path: Path) -> None:
    result = run_lab("profiler-workflow", {"micro_steps": 3}, 1, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["profiled_steps"] == 3
    assert obs["item_calls_per_step"] == 3  # one per micro-step, found in the trace


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_slow_op", {"slow_op_on_top"}),
        ("fast_loader", {"host_gap_visible"}),
        ("no_item", {"item_calls_counted"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("profiler-workflow", {"sabotage": sabotage}, 1, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

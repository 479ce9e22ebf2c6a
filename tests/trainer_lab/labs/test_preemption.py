"""preemption: SIGTERM checkpoints the agreed step and exits cleanly; the requeue continues
the uninterrupted run's losses exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("world_size", [2, 3])
def test_signal_saves_the_step_and_requeue_continues(tmp_path: Path, world_size: int) -> None:
    result = run_lab("preemption", {"steps": 14}, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["preempted"]["saved_step"] == obs["preempted"]["last_step"] == 7
    assert obs["resumed"]["first_step"] == 8


@pytest.mark.parametrize(
    ("sabotage", "failing", "redone"),
    [
        ("no_handler", {"signal_checkpoints_current_step"}, 3),
        ("no_agreement", {"signal_checkpoints_current_step"}, 3),
        ("no_optimizer_state", {"requeue_resumes_exactly"}, 0),
    ],
)
def test_each_sabotage_fails_its_check(
    tmp_path: Path, sabotage: str, failing: set[str], redone: int
) -> None:
    result = run_lab("preemption", {"sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing
    obs = result["observations"]
    # the periodic checkpoint (every 5 steps) is at step 4; the signal came at step 7
    assert obs["resumed"]["redone_steps"] == redone
    assert obs["preempted"]["ranks_stopped_together"] is (sabotage == "no_optimizer_state")

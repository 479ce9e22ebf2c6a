"""masked-loss: zero-filled gaps teach the model the missingness; the masked loss does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_zero_filled_model_collapses_on_missing_entries(tmp_path: Path) -> None:
    result = run_lab("masked-loss", {}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    masked, zero = obs["masked"], obs["zero_filled"]
    assert 0.2 < obs["observed_share"] < 0.6  # most of the matrix is untested
    # untested is mostly not inactive: about half of the hidden entries are actives
    assert obs["true_rate_hidden"] > 0.3
    assert zero["mean_pred_hidden"] < 0.05 < 0.3 < masked["mean_pred_hidden"]
    assert obs["hidden_pred_ratio"] < 0.1
    # on observed entries both rank well: the damage is where the labels are missing
    assert abs(masked["auroc_observed"] - zero["auroc_observed"]) < 0.02
    assert zero["filled_accuracy"] > 0.9 > 0.7 > masked["filled_accuracy"]


@pytest.mark.parametrize(
    ("sabotage", "failing", "world_size"),
    [
        (
            "mask_ignored",
            {
                "masked_calibrated_on_missing",
                "masked_ranks_missing_better",
                "filled_matrix_flatters_zero_fill",
            },
            2,
        ),
        (
            "mostly_observed",
            {
                "zero_fill_collapses_missing",
                "masked_ranks_missing_better",
                "filled_matrix_flatters_zero_fill",
            },
            1,
        ),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str], world_size: int
) -> None:
    result = run_lab("masked-loss", {"sabotage": sabotage}, world_size, tmp_path, timeout_s=180)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

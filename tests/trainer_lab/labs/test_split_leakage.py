"""split-leakage: a random split of series data inflates the test score; a group split does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_random_split_leaks_near_duplicates(tmp_path: Path) -> None:
    result = run_lab("split-leakage", {}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    rnd, grp = obs["random"], obs["group"]
    assert rnd["test_rows"] == grp["test_rows"] == obs["molecules"] // 5
    assert rnd["shared_groups"] > obs["groups"] // 2 and grp["shared_groups"] == 0
    # a random test row has a near-copy in training; a group-split test row does not
    assert rnd["median_nn_distance"] * 4 < grp["median_nn_distance"]
    assert rnd["model_r2"] > 0.9 and rnd["nn_r2"] > 0.9
    assert grp["nn_r2"] < 0.2 and obs["r2_inflation"] >= 0.3


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        (
            "leaky_group_split",
            {"group_split_disjoint", "random_split_inflated", "nn_lookup_exposes_leak"},
        ),
        ("no_series", {"random_split_inflated", "nn_lookup_exposes_leak"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    result = run_lab("split-leakage", {"sabotage": sabotage}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

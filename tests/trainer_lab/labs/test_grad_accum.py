from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def _failed(result: dict) -> set[str]:
    return {c["name"] for c in result["checks"] if not c["passed"]}


def test_no_sync_accumulation_matches_the_big_batch_with_fewer_allreduces(tmp_path: Path) -> None:
    result = run_lab("grad-accum", {}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []  # claims can name every observation
    obs = result["observations"]
    buckets = obs["buckets"]
    assert buckets >= 2  # small buckets, so a sync round is several all-reduces
    assert obs["allreduces_per_step"] == {"big": buckets, "accum": buckets, "naive": 4 * buckets}
    assert obs["saved_allreduce_rounds"] == 3
    assert obs["max_rel_grad_diff"]["accum"] <= 1e-5
    assert obs["max_weight_diff"]["accum"] <= 1e-5


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("sync_every_micro", {"k_minus_1_fewer_allreduces"}),
        ("no_loss_scale", {"accum_equals_big_batch"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    result = run_lab("grad-accum", {"sabotage": sabotage, "steps": 2}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert _failed(result) == failing

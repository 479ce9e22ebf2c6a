"""dist-eval: summed counts over unpadded shards and id de-duplication are exact; the padding
sampler and a mean of per-rank means are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("world_size", [2, 3])
def test_exact_methods_match_one_pass(tmp_path: Path, world_size: int) -> None:
    result = run_lab("dist-eval", {"per_rank": 6}, world_size, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["dataset_size"] == 6 * world_size + 1
    assert obs["padded"]["counted_minus_dataset"] == world_size - 1
    assert obs["padded"]["abs_error"] > 0 and obs["mean_of_means"]["abs_error"] > 0
    assert obs["exact"]["accuracy"] == obs["dedup"]["accuracy"] == obs["reference_accuracy"]


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("exact_with_sampler", {"exact_matches_reference"}),
        ("no_dedup", {"dedup_matches_reference"}),
        ("divisible", {"padding_biases_metric"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("dist-eval", {"sabotage": sabotage}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

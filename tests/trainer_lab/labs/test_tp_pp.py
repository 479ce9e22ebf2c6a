"""tp-pp: colwise + rowwise costs one all-reduce each way; GPipe sends two messages per
boundary and micro-batch; both match one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("world_size", [2, 3])
def test_tensor_and_pipeline_parallel_match_one_process(tmp_path: Path, world_size: int) -> None:
    result = run_lab("tp-pp", {"microbatches": 4}, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["tp"]["local_up_shape"] == [4, 8]  # 4 * W hidden units, split W ways
    assert obs["pp"]["sends"] == 2 * (world_size - 1) * 4


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("gather_between", {"tp_one_all_reduce_each_way"}),
        ("rowwise_partial", {"tp_one_all_reduce_each_way", "tp_matches_one_process"}),
        ("forward_only", {"pp_matches_one_process", "pp_two_sends_per_boundary"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("tp-pp", {"sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

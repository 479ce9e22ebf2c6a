"""iterable-shard: a stream split by rank and worker is read once; unsplit, once per reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("world_size", [2, 3])
def test_split_by_rank_and_worker_reads_each_id_once(tmp_path: Path, world_size: int) -> None:
    result = run_lab("iterable-shard", {"samples": 60}, world_size, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["fixed"]["yielded"] == 60 and obs["fixed"]["distinct"] == 60
    assert obs["naive"]["copies_per_id"] == world_size * 2
    assert obs["rank_only"]["copies_per_id"] == 2
    assert obs["workers_seen"] == world_size * 2


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_worker_split", {"fixed_exactly_once"}),
        ("in_process", {"naive_duplicates_everywhere", "rank_only_duplicates_per_worker"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("iterable-shard", {"sabotage": sabotage}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

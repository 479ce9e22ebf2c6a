"""ddp-buckets: DDP's first iteration reduces one bucket, then rebuilds in gradient-ready order."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab
from trainer_lab.labs.ddp_buckets.drive import summarise


def bucket(layers: list[int], numel: int, ready: int, of: int = 4) -> dict[str, object]:
    return {"layers": layers, "numel": numel, "ready": ready, "of": of}


def test_summarise_counts_buckets_overlap_and_layout_change() -> None:
    first = [bucket([0, 1], 40, ready=4)]
    later = [bucket([1], 20, ready=2), bucket([0], 20, ready=4)]
    seen = summarise([first, later, later])
    assert seen["buckets_per_iteration"] == [1, 2, 2]
    assert (seen["first_overlapped"], seen["later_overlapped"]) == (0, 1)
    assert seen["later_launch_layers"] == [1]
    assert seen["first_bucket_share"] == 1.0
    assert seen["layout_changed"] is True
    assert summarise([later, later])["layout_changed"] is False


@pytest.mark.lab
def test_first_iteration_is_one_bucket_then_rebuilt(tmp_path: Path) -> None:
    result = run_lab("ddp-buckets", {}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    default, unused = result["observations"]["default"], result["observations"]["find_unused"]
    # 8 layers of 256x256 (+bias) at bucket_cap_mb=0.3: two layers per rebuilt bucket
    assert default["buckets_per_iteration"] == [1, 4, 4, 4]
    assert default["first_overlapped"] == 0 and default["later_overlapped"] == 3
    assert default["later_launch_layers"] == [6, 7]
    # reverse registration order: the last layer's bias is left over as a bucket of its own
    assert unused["buckets_per_iteration"] == [5, 5, 5, 5]
    assert unused["first_launch_layers"] == [7] and unused["first_bucket_share"] < 0.01


@pytest.mark.lab
@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("swap_modes", {"default_first_iteration_one_bucket", "find_unused_keeps_reverse_order"}),
        ("one_bucket", {"default_rebuilds_in_ready_order", "find_unused_keeps_reverse_order"}),
    ],
)
def test_each_sabotage_fails_its_checks(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("ddp-buckets", {"sabotage": sabotage}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

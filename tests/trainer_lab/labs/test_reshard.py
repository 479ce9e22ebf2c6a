"""reshard lab: DCP save at W=2, load at 1 and 3 with identical tensors; the global offset
keeps exactly-once while per-rank counters duplicate (W 2->1) or skip (W 2->3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_save_at_2_load_at_1_and_3(tmp_path: Path) -> None:
    result = run_lab("reshard", {}, 2, tmp_path, 120)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert ".metadata" in obs["checkpoint_files"] and obs["tensors"] > 0
    consumed = obs["global_consumed"]
    w1, w3 = obs["loads"]["w1"], obs["loads"]["w3"]
    assert w1["tensors_identical"] and w3["tensors_identical"]
    assert w1["global"] == {"duplicates": 0, "skipped": 0} == w3["global"]
    # each rank had consumed half of the global offset: 1 rank repeats half, 3 ranks skip half
    assert w1["per_rank"] == {"duplicates": consumed // 2, "skipped": 0}
    assert w3["per_rank"] == {"duplicates": 0, "skipped": consumed // 2}
    assert (w1["per_rank_batch"], w3["per_rank_batch"]) == (12, 4)
    # one save launch at W=2; both loads in one launch of 3 processes (groups of 1 and 3)
    assert [launch["variant"] for launch in result["launches"]] == ["save", "load"]


def test_skipping_the_load_and_per_rank_offsets_fail_their_checks(tmp_path: Path) -> None:
    params = {"load_world_sizes": "1", "load_state": False, "resume_offset": "per_rank"}
    result = run_lab("reshard", params, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "tensors_identical_after_load": False,
        "exactly_once": False,
        "per_rank_counters_break": True,
    }
    assert result["observations"]["loads"]["w1"]["differing_tensors"]


def test_a_bad_world_size_list_is_a_clear_error(tmp_path: Path) -> None:
    result = run_lab("reshard", {"load_world_sizes": "1,x"}, 2, tmp_path, 60)
    assert result["status"] == "error"
    assert "comma-separated" in result["error"]["message"]
    assert result["launches"] == []


def test_loading_at_the_same_world_size_shows_no_per_rank_breakage(tmp_path: Path) -> None:
    result = run_lab("reshard", {"load_world_sizes": "2"}, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "tensors_identical_after_load": True,
        "exactly_once": True,
        "per_rank_counters_break": False,
    }
    assert result["observations"]["loads"]["w2"]["per_rank"] == {"duplicates": 0, "skipped": 0}

"""hang lab: every scenario at W=2 (mismatch at W=3, where a majority names the victim), the
root cause comes from the logs, nothing is left running, and each check can fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.devices import hide_cuda
from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def run(tmp_path: Path, world_size: int, **params: Any) -> dict[str, Any]:
    result = run_lab("hang", params, world_size, tmp_path, timeout_s=60)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["duration_s"] <= 60
    return result


def test_skip_peers_time_out_and_the_silent_rank_is_blamed(tmp_path: Path) -> None:
    result = run(tmp_path, 2, scenario="skip", collective_timeout_s=2.0)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert 1.6 <= obs["seconds_to_failure"] <= 12
    assert obs["survivor_errors"] == {"0": "timeout"}
    assert obs["root_cause"]["rank"] == 1 and obs["root_cause"]["kind"] == "hang"
    # torchrun's own "Root Cause (first observed failure)" is the peer that timed out
    assert obs["torchrun_root_cause_rank"] == 0
    assert obs["torchrun_blames_victim"] is False and obs["root_cause_is_victim"] is True
    # the waiting rank's side thread keeps beating; its step counter does not move
    assert obs["stall"]["heartbeats"] >= 5 and obs["stall"]["steps_done"] == 0


def test_at_three_ranks_the_last_rank_is_the_victim_and_torchrun_blames_a_peer(
    tmp_path: Path,
) -> None:
    """Cards claim root_cause_is_victim / torchrun_blames_victim, not rank numbers: they hold
    at any world size."""
    result = run(tmp_path, 3, scenario="skip", collective_timeout_s=2.0)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["victim"] == 2 and obs["root_cause"]["rank"] == 2
    assert obs["root_cause_is_victim"] is True
    assert obs["torchrun_root_cause_rank"] in (0, 1) and obs["torchrun_blames_victim"] is False


def test_naive_blame_names_the_timed_out_peer_instead(tmp_path: Path) -> None:
    result = run(tmp_path, 2, scenario="skip", collective_timeout_s=2.0, blame="first_error")
    assert result["status"] == "failed"
    assert checks(result) == {"peers_time_out": True, "root_cause_is_victim": False}
    assert result["observations"]["root_cause"]["rank"] == 0


def test_dead_rank_survivors_fail_fast_with_the_crash_as_root_cause(tmp_path: Path) -> None:
    result = run(tmp_path, 2, scenario="dead-rank", collective_timeout_s=10.0)
    assert result["status"] == "ok", result
    obs = result["observations"]
    root = obs["root_cause"]
    assert root["rank"] == 1 and root["kind"] == "exception"
    assert "simulated fault on rank 1" in root["message"]
    assert obs["seconds_to_failure"] is None or obs["seconds_to_failure"] < 10


def test_a_sigkilled_rank_is_found_from_torchruns_exit_codes(tmp_path: Path) -> None:
    result = run(tmp_path, 2, scenario="dead-rank", death="sigkill", collective_timeout_s=10.0)
    assert result["status"] == "ok", result
    root = result["observations"]["root_cause"]
    assert (root["rank"], root["kind"]) == (1, "signal")
    assert "signal 9" in root["message"]


def test_straggler_is_named_by_monitored_barrier_at_world_size_3(tmp_path: Path) -> None:
    result = run(tmp_path, 3, scenario="straggler", collective_timeout_s=2.0)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["named_late_ranks"] == [2]
    assert obs["root_cause"]["rank"] == 2 and obs["root_cause"]["kind"] == "late"


def test_plain_barrier_names_nobody(tmp_path: Path) -> None:
    result = run(tmp_path, 2, scenario="straggler", collective_timeout_s=2.0, monitored=False)
    assert result["status"] == "failed"
    assert checks(result)["names_late_rank"] is False


def test_mismatch_detail_is_immediate_plain_times_out_at_world_size_3(tmp_path: Path) -> None:
    result = run(tmp_path, 3, scenario="mismatch", collective_timeout_s=3.0)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["detail"]["seconds_to_failure"] < 1.5 and obs["detail"]["names_op_and_shape"]
    assert obs["plain"]["outcome"] == "timeout" and obs["plain"]["seconds_to_failure"] >= 2.4
    assert obs["root_cause"]["rank"] == 2 and obs["root_cause"]["kind"] == "mismatch"


def test_shape_mismatch_without_detail_aborts_the_smaller_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_cuda(monkeypatch)  # gloo's behaviour (NCCL would take 2+ visible GPUs)
    result = run(tmp_path, 2, scenario="mismatch", mismatch="shape", collective_timeout_s=10.0)
    assert result["status"] == "ok", result
    obs = result["observations"]
    # gloo's receive-size check is fatal (C++ terminate, SIGABRT), not a Python exception
    assert obs["plain"]["outcome"] == "abort"
    assert obs["root_cause"]["rank"] == 1 and obs["root_cause"]["kind"] == "abort"
    assert "Received data size doesn't match" in obs["root_cause"]["message"]
    assert obs["detail"]["names_op_and_shape"] is True


def test_swapping_the_detail_env_fails_both_mismatch_checks(tmp_path: Path) -> None:
    result = run(
        tmp_path, 2, scenario="mismatch", collective_timeout_s=2.0, detail=False, plain_detail=True
    )
    assert result["status"] == "failed"
    # the launches' environments swapped: no fast error without DETAIL, a diagnosis with it
    assert checks(result)["detail_fails_fast"] is False
    assert checks(result)["plain_gives_no_diagnosis"] is False


def test_a_process_group_timeout_other_than_the_configured_one_fails_peers_time_out(
    tmp_path: Path,
) -> None:
    result = run(tmp_path, 2, scenario="skip", collective_timeout_s=6.0, pg_timeout_s=1.5)
    assert result["status"] == "failed"
    assert checks(result) == {"peers_time_out": False, "root_cause_is_victim": True}
    obs = result["observations"]
    assert obs["survivor_errors"] == {"0": "timeout"}
    assert obs["seconds_to_failure"] < 0.8 * 6.0


def test_a_rank_alive_after_its_thread_died_makes_survivors_wait_out_the_timeout(
    tmp_path: Path,
) -> None:
    result = run(tmp_path, 2, scenario="dead-rank", death="thread", collective_timeout_s=2.0)
    assert result["status"] == "failed"
    assert checks(result) == {"survivors_fail_fast": False, "root_cause_is_victim": True}
    obs = result["observations"]
    assert obs["survivor_errors"] == {"0": "timeout"}
    assert obs["seconds_to_failure"] >= 1.6
    assert obs["root_cause"]["kind"] == "hang"

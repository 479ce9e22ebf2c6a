"""node-loss lab: node 1 of two emulated nodes is killed mid-run; the survivor's all_reduce
fails, its agent restarts it, and with min nodes 1 the job finishes at world size 1 from the
last checkpoint. Each check fails when its behavior is broken (min nodes 2, no restarts, no
resume)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.lab_checks import checks, cluster_leftovers, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _cluster_gone() -> Iterator[None]:
    yield
    assert cluster_leftovers() == []


def test_the_survivor_restarts_and_finishes_alone_from_the_last_checkpoint(
    tmp_path: Path,
) -> None:
    result = run_lab("node-loss", {}, 2, tmp_path, 90)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["mode"] == "netns" and obs["mode_note"] == ""
    assert obs["survivor_error"] == "peer_gone"
    assert obs["agent_exit"] == {"node0": 0, "node1": -9}
    assert obs["world_size_before"] == 2 and obs["world_size_after"] == 1
    assert obs["resumed_from_step"] == obs["last_saved_step"] == 4
    assert obs["final_step"] == 14
    # keep_global: the global batch stays, the one rank left takes all of it, the LR stays
    assert obs["global_batch_after"] == obs["global_batch_before"] == 8
    assert obs["per_rank_batch_after"] == 2 * obs["per_rank_batch_before"]
    assert obs["lr_after"] == obs["lr_before"]


def test_with_min_nodes_two_the_survivor_waits_for_a_replacement_then_gives_up(
    tmp_path: Path,
) -> None:
    result = run_lab("node-loss", {"min_nodes": 2, "join_timeout_s": 3}, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "survivor_saw_collective_error": True,
        "agent_restarted_workers": False,
        "continued_at_smaller_world": False,
        "resumed_from_last_checkpoint": False,
    }
    obs = result["observations"]
    assert obs["agent_end"] == "rendezvous_timeout" and obs["agent_exit"]["node0"] == 1
    assert obs["agent_end_s"] >= 3  # it waited the join timeout


def test_a_script_that_ignores_its_checkpoint_starts_over_at_half_the_batch(
    tmp_path: Path,
) -> None:
    params = {"resume": False, "batch_policy": "keep_per_rank"}
    result = run_lab("node-loss", params, 2, tmp_path, 90)
    assert result["status"] == "failed"
    assert checks(result) == {
        "survivor_saw_collective_error": True,
        "agent_restarted_workers": True,
        "continued_at_smaller_world": True,
        "resumed_from_last_checkpoint": False,
    }
    obs = result["observations"]
    assert obs["resumed_from_step"] == 0
    # keep_per_rank: each rank keeps 4 samples, the global batch halves and the LR with it
    assert obs["per_rank_batch_after"] == obs["per_rank_batch_before"] == 4
    assert obs["global_batch_after"] == 4 and obs["lr_after"] == obs["lr_before"] / 2


def test_no_restarts_on_loopback_ends_the_job_and_says_which_mode_ran(tmp_path: Path) -> None:
    result = run_lab("node-loss", {"max_restarts": 0, "loopback": True}, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    obs = result["observations"]
    assert obs["mode"] == "loopback" and obs["mode_note"]
    assert checks(result) == {
        "survivor_saw_collective_error": True,
        "agent_restarted_workers": False,
        "continued_at_smaller_world": False,
        "resumed_from_last_checkpoint": False,
    }
    assert obs["agent_end"] == "worker_failed" and obs["restarts"] == 0


def test_a_replacement_node_joins_and_the_job_scales_back_to_two_from_the_checkpoint(
    tmp_path: Path,
) -> None:
    result = run_lab("node-loss", {"replacement": True}, 2, tmp_path, 150)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    # the survivor's worker ran at 2, alone at 1 after the kill, at 2 again after the join;
    # the join restarted it without using up a restart (one, for the lost node)
    assert obs["world_sizes"] == "2, 1, 2" and obs["restarts"] == 1
    assert {obs["replacement_rank"], obs["survivor_rank_after_join"]} == {0, 1}
    assert obs["replacement_world_size"] == 2
    assert (
        obs["replacement_resumed_from_step"]
        == obs["survivor_resumed_after_join"]
        == obs["last_saved_before_join"]
        > obs["last_saved_step"]
    )
    assert obs["agent_exit"] == {"node0": 0, "node1": 0}
    assert checks(result)["replacement_scaled_back"] is True

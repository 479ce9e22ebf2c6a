"""restart-accounting lab: on torch's elastic agent a node joining restarts the workers without
using up --max-restarts, a killed worker uses one on its node, and a node leaving uses one on
the survivor (its collective fails first). Checks fail when the budget is 0 (a join still
restarts the workers, the failure ends the job)."""

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


def test_a_join_is_free_a_failed_worker_and_a_lost_node_each_cost_a_restart(
    tmp_path: Path,
) -> None:
    result = run_lab("restart-accounting", {}, 2, tmp_path, 150)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["mode"] == "netns" and obs["phases"] == "join, failure, leave"
    counts = obs["restart_count"]
    assert counts["start"] == {"node0": 0, "node1": -1}
    assert counts["join"] == {"node0": 0, "node1": 0}  # restarted, nothing counted
    assert counts["failure"]["node1"] == 1
    assert counts["leave"] == {"node0": counts["failure"]["node0"] + 1, "node1": -1}
    assert obs["world_size"] == {"join": 2, "failure": 2, "leave": 1}
    logged = obs["agent_logged"]
    assert logged["node0"]["membership_restarts"] >= 1
    assert logged["node1"]["failure_restarts"] == 1
    assert obs["agent_end"]["node0"] == "finished"


def test_without_restarts_a_join_still_restarts_and_the_failure_ends_the_job_on_loopback(
    tmp_path: Path,
) -> None:
    result = run_lab("restart-accounting", {"max_restarts": 0, "loopback": True}, 2, tmp_path, 150)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "join_not_counted": True,
        "failure_counted": False,
        "leave_counted": False,
    }
    obs = result["observations"]
    assert obs["mode"] == "loopback" and obs["mode_note"]
    assert obs["phases"] == "join, failure"
    assert obs["restart_count"]["failure"]["node1"] == -1
    assert obs["agent_end"]["node1"] == "worker_failed"

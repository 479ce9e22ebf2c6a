"""rdzv-host-loss lab: killing node 0 (the c10d store's host) ends the job on node 1 although
--nnodes 1:2 and a restart are left; killing node 1 instead lets the job go on, so the lab's
job_ended and store_loss_named checks fail."""

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


def test_losing_the_store_host_ends_the_job_on_the_other_node(tmp_path: Path) -> None:
    result = run_lab("rdzv-host-loss", {}, 2, tmp_path, 90)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["mode"] == "netns"
    assert obs["survivor_error"] == "peer_gone"
    assert obs["survivor_agent_end"] == "rendezvous_error" and obs["survivor_agent_exit"] == 1
    assert "C10d store" in obs["survivor_agent_error"]
    assert obs["survivor_restarts"] == 0 and obs["survivor_final_step"] < 14


def test_losing_the_other_node_lets_the_job_go_on(tmp_path: Path) -> None:
    result = run_lab("rdzv-host-loss", {"kill_node": 1}, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "survivor_saw_collective_error": True,
        "job_ended": False,
        "store_loss_named": False,
    }
    obs = result["observations"]
    assert obs["survivor_agent_end"] == "finished" and obs["survivor_restarts"] == 1


def test_on_loopback_the_store_host_loss_ends_the_job_too(tmp_path: Path) -> None:
    result = run_lab("rdzv-host-loss", {"loopback": True}, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    assert result["observations"]["mode"] == "loopback"
    assert result["observations"]["mode_note"]
    assert result["status"] == "ok", result

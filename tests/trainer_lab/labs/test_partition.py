"""partition lab: node 1's link goes down mid-run; both ranks' all_reduces time out after the
process group's timeout, node 0's agent reports the failed worker and node 1's agent, cut off
from the store, hangs; a monitored_barrier after the timeout names the cut-off rank. Without the
cut every check fails."""

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


def test_a_cut_link_times_out_every_rank_and_hangs_the_cut_off_agent(tmp_path: Path) -> None:
    result = run_lab("partition", {}, 2, tmp_path, 150)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["mode"] == "netns"
    assert obs["error"] == {"node0": "timeout", "node1": "timeout"}
    assert "Timed out" in obs["error_message"]["node0"]
    assert obs["agent_end"] == {"node0": "worker_failed", "node1": "running"}
    assert obs["final_step"] < 40
    # then monitored_barrier on a second group: rank 0 names the rank that did not arrive,
    # the cut-off rank points at rank 0's logs; the plain all_reduce's timeout named nobody
    assert checks(result)["monitored_barrier_named_the_cut_off_rank"] is True
    assert obs["barrier_named"] == {"node0": str(obs["cut_off_rank"]), "node1": "0"}
    assert "failed to pass monitoredBarrier" in obs["barrier_message"]["node0"]
    assert obs["all_reduce_named_a_rank"] == {"node0": False, "node1": False}
    assert obs["barrier_error_s"]["node0"] > obs["error_s"]["node0"]  # its own timeout after


def test_without_the_cut_every_check_fails(tmp_path: Path) -> None:
    result = run_lab("partition", {"cut": False, "steps": 10}, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "every_rank_timed_out": False,
        "waited_for_the_timeout": False,
        "store_side_agent_reported_failure": False,
        "partitioned_agent_stuck": False,
        "monitored_barrier_named_the_cut_off_rank": False,
    }
    assert result["observations"]["agent_end"] == {"node0": "finished", "node1": "finished"}

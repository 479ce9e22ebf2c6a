"""per-node-state lab: two emulated nodes; LOCAL_RANK repeats per node while RANK does not, a
LOCAL_RANK rank-0 guard logs once per node, and after node 1 is replaced by a fresh node only a
checkpoint on shared storage resumes every rank at the same step. Each check fails when the
script uses the per-node variant (log_guard LOCAL_RANK, checkpoint node_local)."""

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


def test_two_by_two_shows_the_ranks_and_a_shared_checkpoint_survives_a_replaced_node(
    tmp_path: Path,
) -> None:
    result = run_lab("per-node-state", {}, 4, tmp_path, 120)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["mode"] == "netns" and obs["nproc_per_node"] == 2
    seen = {rank: (v["local_rank"], v["group_rank"], v["node"]) for rank, v in obs["env"].items()}
    assert seen == {
        "rank0": (0, 0, 0),
        "rank1": (1, 0, 0),
        "rank2": (0, 1, 1),
        "rank3": (1, 1, 1),
    }
    assert obs["log_lines"] == {"local_rank": 2, "rank": 1, "script": 1}
    assert obs["saved_before_kill"] == {"node_local": 2, "shared": 1}
    # the fresh node 1 finds its local folder empty; the shared store serves every rank
    assert obs["resumed"]["node_local"] == {"rank0": 2, "rank1": 2, "rank2": -1, "rank3": -1}
    assert obs["resumed"]["shared"] == {f"rank{r}": 2 for r in range(4)}
    assert obs["steps_agree"] == {"node_local": False, "shared": True}
    assert obs["after_replacement"] == "finished" and obs["final_step"] == 8


def test_the_per_node_guard_and_node_local_checkpoint_fail_on_loopback_one_process_per_node(
    tmp_path: Path,
) -> None:
    params = {"log_guard": "LOCAL_RANK", "checkpoint": "node_local", "loopback": True}
    result = run_lab("per-node-state", params, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {"rank_zero_logs_once": False, "resume_consistent": False}
    obs = result["observations"]
    assert obs["mode"] == "loopback" and obs["mode_note"]
    assert obs["log_lines"]["script"] == 2  # LOCAL_RANK is 0 on both nodes
    assert obs["resumed"]["node_local"] == {"rank0": 2, "rank1": -1}
    assert obs["after_replacement"] == "mismatch"

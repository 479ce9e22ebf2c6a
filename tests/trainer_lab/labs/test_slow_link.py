"""slow-link lab: two emulated nodes x 2 processes. Node 1's link limited by tc tbf: the shaped
link's fitted beta matches the configured rate, the flat all_reduce runs at the pace of the slow
link, and a hierarchical all_reduce puts fewer counted bytes on it. Each sabotage fails the check
it targets; loopback mode says the link checks did not run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.lab_checks import checks, cluster_leftovers, processes_mentioning, undeclared
from trainer_lab.api import run_lab
from trainer_lab.catalogue import get_lab
from trainer_lab.cluster.nodes import lab_nodes
from trainer_lab.labs.slow_link.drive import message_sizes

CHECKS = ("shaped_beta_matches_rate", "slow_link_sets_the_pace", "hierarchical_crosses_fewer_bytes")


@pytest.fixture
def _cluster_gone() -> Iterator[None]:
    yield
    assert cluster_leftovers() == []


def test_the_lab_runs_on_two_nodes_from_16_kib_by_4x() -> None:
    assert lab_nodes(get_lab("slow-link")) == 2
    assert message_sizes(8192) == [16384, 65536, 262144, 1048576, 4194304, 8388608]
    assert message_sizes(1000) == [16384, 65536, 262144, 1024000]


@pytest.mark.lab
@pytest.mark.usefixtures("_cluster_gone")
def test_the_shaped_link_sets_the_pace_and_hierarchy_crosses_it_less(tmp_path: Path) -> None:
    result = run_lab("slow-link", {}, 4, tmp_path, 150)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["mode"] == "netns"
    assert obs["shaping"]["mode"] in ("tbf", "netem")
    if not obs["shaping"]["netem"]:
        assert "no netem" in obs["shaping"]["note"]
    assert 0.5 <= obs["shaped_over_rate"] <= 2.0
    # the unshaped link is far faster than the shaped one; the fit is a line through the times
    assert obs["seconds"]["shaped"][-1] > 2 * obs["seconds"]["cross"][-1]  # 8 MiB: ~10x apart
    assert obs["fit"]["shaped"]["r2"] > 0.9
    # a 2-process all_reduce moves its message once each way; the flat 2x2 ring 1.5x each way,
    # the hierarchical one once each way (the intra-node steps stay off the link)
    assert 0.95 <= obs["link_bytes_per_message_byte"] <= 1.1
    assert 2.9 <= obs["crossing_over_size"]["flat"] <= 3.2
    assert 1.9 <= obs["crossing_over_size"]["hierarchical"] <= 2.15
    assert obs["results_agree"] is True


@pytest.mark.lab
@pytest.mark.usefixtures("_cluster_gone")
@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_shaping", {"shaped_beta_matches_rate", "slow_link_sets_the_pace"}),
        ("cross_first", {"hierarchical_crosses_fewer_bytes"}),
        ("no_broadcast", {"hierarchical_crosses_fewer_bytes"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("slow-link", {"sabotage": sabotage}, 4, tmp_path, 150)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed", result
    assert checks(result) == {name: name not in failing for name in CHECKS}
    obs = result["observations"]
    if sabotage == "cross_first":  # every process sends its whole tensor over the link
        assert obs["hierarchical_over_flat_bytes"] > 1.0 and obs["results_agree"] is True
    if sabotage == "no_broadcast":  # fewer bytes, but the non-leaders never get the sum
        assert obs["hierarchical_over_flat_bytes"] < 0.8 and obs["results_agree"] is False
    if sabotage == "no_shaping":
        over = obs["shaped_over_rate"]  # None: no slope left to fit on the fast link
        assert obs["shaping"]["mode"] == "none" and (over is None or over > 2.0)


@pytest.mark.lab
def test_loopback_mode_says_the_link_checks_did_not_run(tmp_path: Path) -> None:
    result = run_lab("slow-link", {"loopback": True, "max_kib": 1024}, 4, tmp_path, 150)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    obs = result["observations"]
    assert obs["mode"] == "loopback" and obs["mode_note"]
    assert obs["shaping"]["mode"] == "none" and obs["shaped_over_rate"] is None
    assert obs["crossing_bytes"] == {"flat": None, "hierarchical": None}
    # the timings still ran (a fit of sizes up to 1 MiB on a loaded machine may have no slope)
    intra = obs["seconds"]["intra"]
    assert len(intra) == len(message_sizes(1024)) and all(t > 0 for t in intra)
    details = {c["name"]: c["detail"] for c in result["checks"]}
    assert checks(result) == dict.fromkeys(CHECKS, False)
    assert all(details[name].startswith("did not run: loopback mode") for name in CHECKS)

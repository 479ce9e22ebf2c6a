"""rendezvous: a missing rank times out naming the count, a wrong port retries, a held port
fails at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab
from trainer_lab.labs.rendezvous.drive import joined_counts


def test_joined_counts_reads_the_stores_message() -> None:
    message = "Timed out after 2 seconds waiting for clients. 2/3 clients joined."
    assert joined_counts(message) == (2, 3)
    assert joined_counts("The client socket has timed out") is None


@pytest.mark.lab
@pytest.mark.parametrize("world_size", [2, 3])
def test_each_startup_failure_looks_as_documented(tmp_path: Path, world_size: int) -> None:
    result = run_lab("rendezvous", {}, world_size, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert f"{world_size - 1}/{world_size} clients joined" in obs["missing"]["message"]
    assert obs["missing"]["waited_over_timeout"] >= 0.9
    assert "timed out" in obs["wrong_address"]["victim_message"]
    assert "EADDRINUSE" in obs["port_in_use"]["message"]


@pytest.mark.lab
@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("victim_joins", {"missing_rank_waits_then_counts"}),
        ("right_address", {"wrong_address_retries_until_timeout"}),
        ("free_port", {"port_in_use_fails_fast"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("rendezvous", {"sabotage": sabotage}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

"""checkpoint-atomicity lab: SIGKILL mid-save over several trials never leads to a torn pick;
the naive newest-directory rule does; a run-length field is (rightly) not an incompatibility."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_kills_mid_save_never_lead_to_a_torn_pick(tmp_path: Path) -> None:
    result = run_lab("checkpoint-atomicity", {}, 2, tmp_path, 120)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["restarts"] == 2 and len(obs["kills"]) == 2
    # one kill after a commit (the new dir is the one to pick), one inside a rank file (torn)
    assert [k["stage"] for k in obs["kills"]] == ["after_rename", "rank_file"]
    assert obs["torn_dirs_seen"] >= 1
    assert all(p["picked"] == p["expected"] and p["loaded"] for p in obs["picks"])
    assert "hidden: checkpoint 256 vs run 512" in obs["mismatch"]["message"]
    assert obs["save_latency_ms"]["median"] > 0
    # every directory under a committed name holds every file
    for step_dir in (tmp_path / "checkpoints").glob("step-*"):
        assert {f.name for f in step_dir.iterdir()} == {
            "meta.json",
            "shared.pt",
            "rank0.pt",
            "rank1.pt",
        }


def test_newest_directory_rule_picks_torn_checkpoints(tmp_path: Path) -> None:
    params = {"picker": "newest_dir", "incompatible": "steps"}
    result = run_lab("checkpoint-atomicity", params, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "every_kill_landed": True,
        "latest_complete_always_found": False,
        "torn_never_picked": False,
        "incompatible_config_refused": False,
    }
    assert result["observations"]["torn_picks"] >= 1
    assert result["observations"]["mismatch"]["refused"] is False


def test_a_kill_that_never_fires_fails_every_kill_landed(tmp_path: Path) -> None:
    params = {"kill": "never", "trials": 1, "saves_per_attempt": 2}
    result = run_lab("checkpoint-atomicity", params, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    # no kill, no restart: nothing to pick either, so the pick check has no restart to judge
    assert checks(result) == {
        "every_kill_landed": False,
        "latest_complete_always_found": False,
        "torn_never_picked": True,
        "incompatible_config_refused": True,
    }
    obs = result["observations"]
    assert obs["kills"] == [] and obs["restarts"] == 0 and obs["picks"] == []
    assert obs["mismatch"]["refused"] is True

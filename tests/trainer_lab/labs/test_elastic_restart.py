"""elastic-restart lab: torchrun restarts the crashed group, the run resumes from the latest
committed checkpoint and ends bit-identical to an uncrashed run; a weights-only resume fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_restart_resumes_from_latest_checkpoint_with_the_same_final_loss(tmp_path: Path) -> None:
    result = run_lab("elastic-restart", {}, 2, tmp_path, 90)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["restarts"] == 1
    assert obs["resumed_from_step"] == 4 and obs["redone_steps"] == 3
    assert obs["final_loss"] == obs["reference_final_loss"]
    assert (tmp_path / "failures" / "rank1.json").exists()
    # saves at 4 before the crash, 8 and 12 after it: three, each a timed checkpoint phase
    assert obs["saves"] == 3 and obs["checkpoint_s"] > 0 and obs["redone_s"] > 0
    assert "compare" not in obs  # compare_every 0: one launch only


def test_saving_every_step_trades_redone_work_for_save_time(tmp_path: Path) -> None:
    result = run_lab("elastic-restart", {"compare_every": 1}, 2, tmp_path, 90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    compare = result["observations"]["compare"]
    assert result["observations"]["redone_steps"] == 3 and compare["redone_steps"] == 0
    assert compare["saves"] == 12 and compare["saves_ratio"] == 4
    assert compare["redone_s"] == 0 and compare["save_time_ratio"] > 1


def test_weights_only_resume_ends_at_another_loss(tmp_path: Path) -> None:
    params = {"resume": "model_only", "steps": 8, "crash_step": 5}
    result = run_lab("elastic-restart", params, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "job_restarted": True,
        "resumed_from_latest_checkpoint": True,
        "final_loss_matches": False,
    }
    assert result["observations"]["final_loss_diff"] > 0


def test_restarting_from_scratch_redoes_every_step(tmp_path: Path) -> None:
    params = {"resume": "scratch", "steps": 8, "crash_step": 5}
    result = run_lab("elastic-restart", params, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    got = checks(result)
    assert got["resumed_from_latest_checkpoint"] is False
    # deterministic training ends at the same loss; the cost is the redone steps
    assert got["final_loss_matches"] is True and got["job_restarted"] is True
    assert result["observations"]["redone_steps"] == 5


def test_no_restarts_lets_the_crash_end_the_job(tmp_path: Path) -> None:
    params = {"max_restarts": 0, "steps": 8, "crash_step": 5}
    result = run_lab("elastic-restart", params, 2, tmp_path, 90)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "job_restarted": False,
        "resumed_from_latest_checkpoint": False,
        "final_loss_matches": False,
    }
    assert result["observations"]["restarts"] == 0
    assert [launch["status"] for launch in result["launches"]] == ["error"]
    assert (tmp_path / "failures" / "rank1.json").exists()

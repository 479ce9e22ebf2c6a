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

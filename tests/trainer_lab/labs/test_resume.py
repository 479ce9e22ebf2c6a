from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.catalogue import get_lab
from trainer_lab.driver import execute
from trainer_lab.labs.resume.drive import compare

pytestmark = pytest.mark.lab


def test_compare_reports_first_differing_step_and_jump() -> None:
    reference = {(0, 1): 1.0, (0, 2): 1.0, (0, 3): 0.5, (0, 4): 0.4}
    resumed = {(0, 2): 1.0, (0, 3): 1.5, (0, 4): 0.4}
    out = compare(reference, resumed, k=1)
    assert out["first_diff_step"] == 3
    assert out["max_abs_diff"] == 1.0
    assert out["loss_jump_ratio"] == 3.0
    assert out["bit_identical"] is False


def test_resume_lab_at_world_size_2(tmp_path: Path) -> None:
    spec = get_lab("resume")
    result = execute(spec, spec.resolve_params({}), 2, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result["error"] or result["checks"]
    modes = result["observations"]["modes"]
    assert modes["full"]["bit_identical"] is True
    assert modes["full"]["max_abs_diff"] == 0.0
    for mode in ("weights_only", "fresh_optimizer", "no_rng", "no_scheduler"):
        assert modes[mode]["max_abs_diff"] > 0, mode
    assert result["observations"]["killed_by_signal"] is True
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step-000008"]


def test_full_resume_without_rng_fails_the_exactness_check(tmp_path: Path) -> None:
    spec = get_lab("resume")
    params = spec.resolve_params({"sabotage": "full_without_rng", "steps": 12, "resume_step": 6})
    result = execute(spec, params, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed"
    failed = {c["name"] for c in result["checks"] if not c["passed"]}
    assert "full_state_resume_exact" in failed

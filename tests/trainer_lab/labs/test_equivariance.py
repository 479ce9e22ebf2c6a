"""equivariance: the rotate-the-input test passes an EGNN and catches layers that break it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_egnn_passes_and_broken_layers_are_caught(tmp_path: Path) -> None:
    result = run_lab("equivariance", {}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["rotation_angle_deg"] > 10 and obs["translation_norm"] > 0
    assert obs["model"]["invariant_err"] < 1e-5 and obs["model"]["equivariant_err"] < 1e-5
    refs = obs["references"]
    assert refs["raw_coords"]["invariant_err"] > 1e-2
    # per-coordinate normalisation keeps the scalar head invariant but breaks the vectors
    for name in ("coord_batchnorm", "coord_layernorm"):
        assert refs[name]["invariant_err"] < 1e-5
        assert refs[name]["equivariant_err"] > 1e-2


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("raw_coords", {"invariant_output_invariant", "vector_output_equivariant"}),
        ("coord_batchnorm", {"vector_output_equivariant"}),
        ("identity_rotation", {"test_catches_broken_layers"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    result = run_lab("equivariance", {"sabotage": sabotage}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

"""lora: parametrize LoRA trains only the adapters, starts at the base model, merges exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_lora_against_full_fine_tuning(tmp_path: Path) -> None:
    result = run_lab("lora", {"steps": 10}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    full, lora = obs["full"], obs["lora"]
    assert full["trainable_params"] == full["params"]
    assert lora["params"] == full["params"] + lora["trainable_params"]  # base + adapters
    # gradients and Adam moments exist for the adapters only
    assert lora["grad_bytes"] == 4 * lora["trainable_params"]
    assert full["optimizer_state_bytes"] == 8 * full["params"] + 4 * full["trainable_tensors"]
    assert obs["optimizer_state_ratio"] == pytest.approx(obs["trainable_fraction"], rel=1e-3)
    assert obs["zero_init_max_abs_diff"] == 0 and obs["base_changed_elements"] == 0
    assert obs["merged_is_plain"] is True and obs["merged_rel_diff"] <= 1e-5
    assert obs["step_time_ratio"] > 0


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        (
            "unfrozen_base",
            {
                "lora_trains_only_adapters",
                "optimizer_state_only_for_adapters",
                "base_weights_untouched",
            },
        ),
        ("random_b_init", {"zero_init_keeps_base_outputs"}),
        ("merge_unscaled", {"merged_matches_adapted"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    result = run_lab("lora", {"sabotage": sabotage, "steps": 10}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

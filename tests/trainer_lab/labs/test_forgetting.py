"""forgetting: a high LR on a shifted task erases task A; a low LR, LoRA and replay keep more."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab

ALL = {"high_lr_forgets", "low_lr_forgets_less", "lora_forgets_less", "replay_forgets_less"}


def test_forgetting_depends_on_lr_adapters_and_replay(tmp_path: Path) -> None:
    result = run_lab("forgetting", {}, 1, tmp_path, timeout_s=240)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    v = obs["variants"]
    assert obs["pretrained"]["acc_a"] > 0.9 and obs["pretrained"]["acc_b"] < 0.4
    assert v["full_high_lr"]["acc_b"] > 0.8  # it learned B ...
    assert v["full_high_lr"]["forgetting"] > 0.5  # ... and lost A
    # LoRA forgets less but also learns B less
    assert v["lora"]["acc_b"] < v["full_high_lr"]["acc_b"]
    assert v["lora"]["trainable_params"] * 10 < v["full_high_lr"]["trainable_params"]
    assert v["replay"]["forgetting"] < 0.1


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_shift", ALL),
        ("low_lr_is_high", {"low_lr_forgets_less"}),
        ("lora_unfrozen_base", {"lora_forgets_less"}),
        ("replay_from_b", {"replay_forgets_less"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    result = run_lab("forgetting", {"sabotage": sabotage}, 1, tmp_path, timeout_s=240)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

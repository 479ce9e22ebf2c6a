from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_fp16_breaks_where_bf16_and_the_scaler_do_not(tmp_path: Path) -> None:
    result = run_lab("precision", {}, 1, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []  # claims can name every observation
    obs = result["observations"]
    # limits come from torch.finfo, not from the lab's source
    assert obs["finfo"]["float16"]["max"] == 65504.0
    assert obs["finfo"]["bfloat16"]["eps"] == 2.0**-7
    assert obs["finfo"]["float16"]["smallest_subnormal"] == 2.0**-24
    under, over = obs["underflow"], obs["overflow"]
    assert under["fp16"]["compute_dtype"] == "float16"  # CPU autocast really ran in fp16
    assert under["bf16"]["compute_dtype"] == "bfloat16"
    assert under["fp16"]["zero_grad_fraction"] > 0.5 > under["fp16_scaler"]["zero_grad_fraction"]
    assert over["fp16"]["nonfinite_loss_steps"] > 0
    assert over["fp16_scaler"]["backoffs"] == over["fp16_scaler"]["skipped_steps"] > 0
    assert over["fp16_scaler"]["final_scale"] < 65536.0  # backed off from the initial 2**16


@pytest.mark.parametrize(
    ("sabotage", "failing", "world_size"),
    [
        ("benign", {"fp16_underflow_zeroes_gradients", "fp16_overflow_goes_nonfinite"}, 2),
        ("no_scaler", {"scaler_restores_gradients", "scaler_backs_off_and_skips"}, 1),
        ("bf16_is_fp16", {"bf16_stable"}, 1),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str], world_size: int
) -> None:
    result = run_lab("precision", {"sabotage": sabotage}, world_size, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {c["name"] for c in result["checks"] if not c["passed"]} == failing

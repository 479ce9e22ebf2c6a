from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_bytes_per_param_fp32_and_autocast(tmp_path: Path) -> None:
    result = run_lab("memory-math", {}, 1, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []  # claims can name every observation
    obs = result["observations"]
    fp32, amp, pure = obs["fp32"], obs["bf16_autocast"], obs["bf16_pure"]
    assert fp32["bytes"]["weights"] == fp32["bytes"]["grads"] == 4 * obs["params"]
    # Adam: two fp32 moments per element plus one 4-byte step scalar per parameter tensor
    assert fp32["optimizer_bytes_by_state"] == {
        "exp_avg": 4 * obs["params"],
        "exp_avg_sq": 4 * obs["params"],
        "step": 4 * fp32["param_tensors"],
    }
    assert amp["bytes"] == fp32["bytes"]  # autocast changes no persistent state
    assert (amp["weight_dtype"], amp["grad_dtype"]) == ("float32", "float32")
    # the matmul weights (not embeddings or LayerNorm) get bf16 copies in flight
    assert 1.5 < amp["transient_weight_copies_per_param"] < 2.0
    assert pure["bytes_per_param"]["total"] == pytest.approx(8.0, abs=0.01)
    assert obs["classic_mixed_precision"]["total"] == 16


@pytest.mark.parametrize(
    ("params", "failing", "world_size"),
    [
        ({"optimizer": "sgd"}, {"fp32_adam_is_16_bytes", "autocast_keeps_fp32_state"}, 2),
        ({"sabotage": "cast_model", "model": "mlp"}, {"autocast_keeps_fp32_state"}, 1),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, params: dict, failing: set[str], world_size: int
) -> None:
    result = run_lab("memory-math", params, world_size, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {c["name"] for c in result["checks"] if not c["passed"]} == failing

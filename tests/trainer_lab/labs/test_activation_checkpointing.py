from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_checkpointing_trades_saved_bytes_for_a_recomputed_forward(tmp_path: Path) -> None:
    result = run_lab("activation-checkpointing", {}, 1, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []  # claims can name every observation
    obs = result["observations"]
    depths = obs["depths"]
    assert sorted(depths, key=int) == ["2", "4", "8"]
    plain = [depths[d]["none"]["saved_bytes"] for d in ("2", "4", "8")]
    ckpt = [depths[d]["per_block"]["saved_bytes"] for d in ("2", "4", "8")]
    assert plain[0] < plain[1] < plain[2]
    assert all(c < p for c, p in zip(ckpt, plain, strict=True))
    # a checkpointed block keeps only its input: batch x seq x d_model fp32 values
    assert obs["bytes_per_block"]["per_block"] == 8 * 64 * 64 * 4
    assert depths["8"]["per_block"]["block_forwards"] == {"forward": 8, "backward": 8}
    assert 1.15 <= obs["flops_ratio"] <= 1.34
    # math attention keeps one seq x seq tensor, the softmax output (batch 8, 2 heads, fp32),
    # which softmax and the matmul with V both save
    attention = obs["attention"]
    assert attention["math"]["saved_bytes"]["64"] == 8 * 2 * 64 * 64 * 4
    assert attention["math"]["growth_at_2x_seq"] == 4.0
    assert attention["sdpa"]["growth_at_2x_seq"] <= 2.5


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_checkpoint", {"checkpointing_cuts_saved_bytes", "recompute_costs_a_forward"}),
        (
            "flat_memory",
            {
                "memory_grows_with_depth",
                "checkpointing_cuts_saved_bytes",
                "recompute_costs_a_forward",
            },
        ),
        ("sdpa_is_math", {"fused_attention_saves_linear_memory"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    params = {"sabotage": sabotage, "max_depth": 4, "timed_steps": 1}
    result = run_lab("activation-checkpointing", params, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {c["name"] for c in result["checks"] if not c["passed"]} == failing

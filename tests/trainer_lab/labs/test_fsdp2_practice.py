"""fsdp2-practice: accumulation with sync off, MixedPrecisionPolicy dtypes, meta-device init."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("world_size", [2, 3])
def test_fsdp2_everyday_uses(tmp_path: Path, world_size: int) -> None:
    result = run_lab("fsdp2-practice", {"micro_steps": 4}, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    # three FSDP units with parameters (two blocks + the root's head): one reduce-scatter each
    assert obs["accum"]["no_sync_reduce_scatters"] == 3
    assert obs["accum"]["every_micro_reduce_scatters"] == 12
    assert obs["mp"]["output_dtype"] == "bfloat16"
    assert obs["mp"]["reduce_dtype"] == "float32"  # reduce_dtype=fp32: the reduce-scatter's input
    # param_dtype=bf16 alone: the reduce-scatter runs in bf16, the sharded grad is still fp32
    assert obs["mp"]["unset_reduce_dtype"] == "bfloat16"
    assert obs["mp"]["unset_grad_dtype"] == "float32"
    assert obs["meta"]["broadcast"]["matches_single_process"] is True
    if not obs["meta"]["reset"]["dtensor_rng"]:  # a CPU mesh: every rank draws the same shard
        assert obs["meta"]["reset"]["shards_identical"] is True


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("sync_every_micro", {"accumulation_syncs_once"}),
        ("never_resync", {"accumulation_syncs_once"}),
        ("no_mp_policy", {"mp_computes_in_bf16_keeps_fp32"}),
        ("bf16_model", {"mp_computes_in_bf16_keeps_fp32"}),
        ("reduce_bf16", {"mp_computes_in_bf16_keeps_fp32"}),
        ("skip_reset", {"meta_reset_initialises"}),
        ("broadcast_off", {"meta_broadcast_equals_one_process"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("fsdp2-practice", {"sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

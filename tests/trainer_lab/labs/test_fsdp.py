"""fsdp lab: measured per-rank bytes shrink as 1/W against DDP, 16 B/param for bf16 Adam, FSDP
gradients and losses equal DDP's; a gradient-sum bug fails the gradient check (not the loss)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_fsdp_holds_half_of_ddp_at_world_size_2(tmp_path: Path) -> None:
    result = run_lab("fsdp", {}, 2, tmp_path, 120)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["world_sizes"] == [1, 2]
    assert obs["fsdp_over_ddp"] == {"w1": 1.0, "w2": 0.5}
    w2 = obs["bytes"]["w2"]
    # fp32 params, fp32 grads, Adam's exp_avg + exp_avg_sq (+ a step counter per param)
    assert w2["fsdp"]["params"] * 2 == w2["ddp"]["params"] == obs["n_params"] * 4
    assert w2["ddp"]["optimizer"] >= obs["n_params"] * 8
    assert 15.9 <= obs["bytes_per_param"]["fsdp_mp_all_ranks"] <= 16.5
    assert obs["max_rel_grad_norm_diff"]["w2"] <= 1e-5
    # one FSDP group per layer: at most about one layer of 8 is gathered at a time
    assert obs["peak_gathered_over_full"]["w2"] <= 0.2


def test_root_only_wrapping_is_sharded_at_rest_but_gathers_the_whole_model(
    tmp_path: Path,
) -> None:
    result = run_lab("fsdp", {"wrap": "root"}, 2, tmp_path, 120)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["fsdp_over_ddp"]["w2"] == 0.5  # parameters, gradients, Adam state: 1/W at rest
    assert obs["peak_gathered_over_full"]["w2"] == 1.0  # but every parameter gathered at once


def test_fsdp_at_world_size_4_holds_a_quarter(tmp_path: Path) -> None:
    result = run_lab("fsdp", {"steps": 2}, 4, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "ok", result
    ratios = result["observations"]["fsdp_over_ddp"]
    assert ratios["w1"] == 1.0 and ratios["w2"] == 0.5 and 0.25 <= ratios["w4"] <= 0.26


def test_summed_gradients_fail_the_gradient_check_but_not_the_loss_check(tmp_path: Path) -> None:
    result = run_lab("fsdp", {"grad_divide": "sum"}, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    got = checks(result)
    assert got["grads_match"] is False
    # Adam is invariant to a constant gradient scale: the loss barely notices the bug.
    assert got["losses_match"] is True
    assert result["observations"]["grad_norm_ratio"]["w2"] == pytest.approx(2.0, rel=1e-4)


def test_a_tight_tolerance_catches_the_summed_gradients_in_the_loss(tmp_path: Path) -> None:
    result = run_lab("fsdp", {"grad_divide": "sum", "tolerance": 1e-8}, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert checks(result)["losses_match"] is False
    assert 0 < result["observations"]["max_rel_loss_diff"]["w2"] < 1e-4


def test_a_full_replica_per_rank_fails_the_sharding_check(tmp_path: Path) -> None:
    result = run_lab("fsdp", {"shard": "replicate", "steps": 2}, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    # HSDP with one shard per replica: correct training, no memory saved
    assert checks(result) == {
        "fsdp_holds_1_over_w": False,
        "losses_match": True,
        "grads_match": True,
        "mp_bytes_per_param": False,
    }
    obs = result["observations"]
    assert obs["fsdp_over_ddp"]["w2"] >= 0.99
    assert obs["bytes"]["w2"]["fsdp"]["params"] == obs["n_params"] * 4
    assert 31.5 <= obs["bytes_per_param"]["fsdp_mp_all_ranks"] <= 33


def test_an_extra_fp32_master_copy_fails_the_bytes_per_param_check(tmp_path: Path) -> None:
    result = run_lab("fsdp", {"master_copy": True, "steps": 2}, 2, tmp_path, 120)
    assert processes_mentioning(tmp_path) == []
    assert result["status"] == "failed"
    assert checks(result) == {
        "fsdp_holds_1_over_w": True,
        "losses_match": True,
        "grads_match": True,
        "mp_bytes_per_param": False,
    }
    obs = result["observations"]
    assert 19.5 <= obs["bytes_per_param"]["fsdp_mp_all_ranks"] <= 20.5
    # the copy is the optimizer's: fp32 m, v and master = 3x the fp32 params of the shard
    mp = obs["bytes"]["w2"]["fsdp_mp"]
    assert mp["optimizer"] >= 3 * mp["params"]

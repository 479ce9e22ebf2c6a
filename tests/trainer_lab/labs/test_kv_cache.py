"""kv-cache: cached decode gives the training forward's logits; its bytes follow the formula;
attention FLOPs per token grow as S with the cache and S^2 without; bf16 serving shifts
log-probs where fp32 does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab

SMALL = {"seq_len": 32, "prompt_len": 4, "batch": 2, "train_steps": 10}


@pytest.mark.parametrize("world_size", [2, 3])
def test_cached_decode_matches_the_training_forward(tmp_path: Path, world_size: int) -> None:
    result = run_lab("kv-cache", SMALL, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["decode"]["max_abs_logit_diff"] <= 1e-4
    # one token's projections vs the whole sequence's: rounding only
    assert obs["decode"]["max_abs_cache_diff_first_layer"] <= 1e-5
    cache = obs["cache"]
    assert cache["shape"] == [2, 2, 32, 16]  # batch, kv heads (not the 4 query heads), S, hd
    assert cache["bytes"] == cache["bytes_formula"] == 2 * 2 * 2 * 16 * 32 * 2 * 4
    assert cache["bytes_bf16"] * 2 == cache["bytes"]
    flops = obs["flops"]
    assert flops["probe_lengths"] == [8, 16, 32]
    cached, recompute = flops["cached"], flops["recompute"]
    # q @ k^T and p @ v over n cached keys: 2 x 2 x heads x n x head_dim per layer
    assert cached["attention"] == [2 * 2 * 2 * 4 * n * 16 for n in (8, 16, 32)]
    assert cached["attention_exponent"] == 1 and recompute["attention_exponent"] == 2
    assert cached["weights_exponent"] == 0 and recompute["weights_exponent"] == 1
    assert len(set(cached["weights"])) == 1  # every step reads and multiplies every weight
    assert flops["recompute_over_cached"] == 32  # this attention computes the full square
    intensity = obs["intensity"]
    assert intensity["decode_step_bytes"] > intensity["model_bytes"] * 0.9
    assert intensity["decode"] < 2 and intensity["full_over_decode"] > 5
    bf16, fp32 = obs["serve"]["bf16"], obs["serve"]["fp32"]
    assert bf16["tokens"] == fp32["tokens"] == (32 - 4) * 2 * world_size
    assert fp32["max_abs_logprob_diff"] <= 1e-4
    assert bf16["max_abs_logprob_diff"] > 100 * fp32["max_abs_logprob_diff"]
    assert bf16["ratio_min"] < 1 < bf16["ratio_max"]
    assert bf16["ratio_std"] > 0 and bf16["mean_kl"] >= 0


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("position_off_by_one", {"decode_matches_full_forward", "cache_holds_every_token"}),
        ("stale_cache", {"decode_matches_full_forward", "cache_holds_every_token"}),
        ("gqa_mis_repeat", {"decode_matches_full_forward"}),
        ("expand_before_cache", {"cache_bytes_match_formula"}),
        ("reprefill", {"decode_cost_linear"}),
    ],
)
def test_each_sabotage_fails_its_checks(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("kv-cache", {**SMALL, "sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing
    obs = result["observations"]
    if sabotage == "expand_before_cache":  # 4 query heads cached instead of 2 kv heads
        assert obs["cache"]["bytes_over_formula"] == 2
    if sabotage == "reprefill":  # same logits, quadratic cost
        assert obs["decode"]["max_abs_logit_diff"] <= 1e-4
        assert obs["flops"]["cached"]["attention_exponent"] == 2


def test_grouped_query_heads_interleave() -> None:
    import torch

    from trainer_lab.labs.kv_cache.worker import expand_heads

    kv = torch.arange(2.0).view(1, 2, 1, 1)  # kv heads 0 and 1
    assert expand_heads(kv, 4).flatten().tolist() == [0, 0, 1, 1]
    assert expand_heads(kv, 4, tiled=True).flatten().tolist() == [0, 1, 0, 1]


def test_matmul_bytes_counts_the_operands() -> None:
    import torch

    from trainer_lab.labs.kv_cache.worker import Counted

    a, w = torch.ones(3, 8), torch.ones(8, 5)
    with Counted() as counted:
        a @ w
        a.sum()  # not a matmul
    assert counted.split(1) == {"attention": 0, "weights": 2 * 3 * 8 * 5, "bytes": (24 + 40) * 4}

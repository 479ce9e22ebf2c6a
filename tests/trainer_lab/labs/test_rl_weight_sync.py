"""rl-weight-sync: after every bucketed broadcast the generators hold the learner's weights
bitwise; rollouts carry their version (lag 0 on-policy, 1 one step off); recorded log-probs
equal the tagged version's; a static decode batch waits for its longest rollout."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab

SMALL = {"iterations": 4}
# Policy(prompts 8, max_len 24): embeddings 8x16, 24x16, 9x16; Linear 16->32, 32->8
ELEMENTS = 128 + 384 + 144 + 512 + 32 + 256 + 8


@pytest.mark.parametrize("world_size", [2, 3])
def test_sync_delivers_every_weight_and_versions_tell_the_lag(
    tmp_path: Path, world_size: int
) -> None:
    result = run_lab("rl-weight-sync", SMALL, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    obs = result["observations"]
    generators = world_size - 1
    assert obs["model_elements"] == ELEMENTS and obs["model_bytes"] == 4 * ELEMENTS
    for name in ("on_policy", "one_step_off"):
        run = obs[name]
        assert run["rollouts"] == 4 * generators * 8 * 4
        assert run["sync"] == {
            "count": 4,
            "buckets": 4,  # 2048 B buckets: [prompt, pos] [prev] [hidden.weight] [the rest]
            "bytes_per_sync": 4 * ELEMENTS,
            "elements_per_sync": ELEMENTS,
            "bytes_over_model": 1.0,
        }
        assert run["weights"]["audits"] == 4 * generators
        assert run["weights"]["max_abs_diff"] == 0 and run["weights"]["digest_mismatches"] == 0
        assert run["logprob"]["tagged_max_abs_diff"] == 0
    on, off = obs["on_policy"], obs["one_step_off"]
    assert on["lag"]["counts"] == {"0": 4 * generators}
    assert off["lag"]["counts"] == {"0": generators, "1": 3 * generators}
    # in sync the importance ratio is exactly 1; one step behind the recorded log-probs are stale
    assert on["logprob"]["current_max_abs_diff"] == 0 and on["ratio"]["clip_fraction"] == 0
    assert off["logprob"]["current_max_abs_diff"] > 0.01 and off["ratio"]["clip_fraction"] > 0
    decode = obs["decode"]
    assert decode["truncated"] == 0 and decode["batches"] == 2 * 4 * generators
    assert decode["slot_utilisation"] < 1 and decode["longest_over_mean"] > 1


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        (
            "first_bucket",
            {
                "weights_equal_after_sync",
                "sync_moves_every_parameter",
                "recorded_logprobs_match_their_version",
            },
        ),
        ("no_reload", {"weights_equal_after_sync", "rollout_lag_as_expected"}),
        ("bf16_copy", {"weights_equal_after_sync", "recorded_logprobs_match_their_version"}),
        ("early_stop", {"no_rollout_truncated"}),
    ],
)
def test_each_sabotage_fails_its_checks(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("rl-weight-sync", {**SMALL, "sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing
    obs = result["observations"]
    if sabotage == "no_reload":  # the weights arrived but were never loaded: the lag grows
        assert obs["on_policy"]["lag"]["counts"] == {"0": 1, "1": 1, "2": 1, "3": 1}
        assert obs["on_policy"]["sync"]["bytes_over_model"] == 1.0
    if sabotage == "bf16_copy":  # every element, half the bytes, not the same weights
        assert obs["on_policy"]["sync"]["bytes_over_model"] == 0.5


def test_buckets_pack_parameters_in_order_up_to_the_cap() -> None:
    import torch

    from trainer_lab.labs.rl_weight_sync.worker import buckets

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 100))  # 16,4,400,100
    sizes = [[p.numel() for p in bucket] for bucket in buckets(model, 100)]
    assert sizes == [[16, 4], [400], [100]]  # a tensor larger than the cap travels alone
    assert [[p.numel() for p in b] for b in buckets(model, 10**6)] == [[16, 4, 400, 100]]


def test_recompute_in_decode_shapes_and_teacher_forced_agree_with_the_recording() -> None:
    import torch

    from trainer_lab.labs.rl_weight_sync.worker import (
        build_policy,
        decode,
        stepwise_logp,
        teacher_forced_logp,
    )

    spec = {"seed": 0, "prompts": 3, "samples": 2, "max_len": 10, "sabotage": "none"}
    policy = build_policy(spec, torch.device("cpu"))
    batch, stats = decode(policy, spec, torch.Generator().manual_seed(1), version=7)
    assert batch.shape == (6, 4 + 10) and set(batch[:, 3].tolist()) == {7.0}
    assert stats["tokens"] == int(batch[:, 1].sum()) and stats["truncated"] == 0
    assert stats["steps"] == stats["longest"]  # a static batch decodes until its longest ends
    recorded = batch[:, 2].float()
    assert torch.equal(stepwise_logp(policy, batch), recorded)
    assert torch.allclose(teacher_forced_logp(policy, batch).detach(), recorded, atol=1e-5)


def test_decode_summary_counts_idle_slots() -> None:
    from trainer_lab.labs.rl_weight_sync.drive import summarise_decode

    stats = [
        {"steps": 10, "tokens": 20, "longest": 10, "truncated": 0},
        {"steps": 4, "tokens": 16, "longest": 4, "truncated": 1},
    ]
    out = summarise_decode(stats, batch=4)
    assert out["slot_utilisation"] == round(36 / 56, 4)
    assert out["longest_over_mean"] == round((10 / 5 + 4 / 4) / 2, 4)
    assert out["truncated"] == 1 and out["rollouts"] == 8

"""stability-logits: QK-norm bounds the attention logits, z-loss pulls log Z to 0; each
sabotage unplugs one of them (or the gradient all-reduce) and fails exactly its check."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab
from trainer_lab.labs.stability_logits.drive import count_spikes, optimal_loss, summarise

pytestmark = pytest.mark.lab


def test_qk_norm_and_z_loss_do_what_they_claim(tmp_path: Path) -> None:
    result = run_lab("stability-logits", {}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    arms = obs["arms"]
    assert obs["attn_logit_bound"] == 4.0  # sqrt(d_head = 16)
    assert obs["optimal_loss"] == round(8 * math.log(32) / 16, 4)
    for name in ("qk_norm", "stabilised"):
        # Cauchy-Schwarz on RMS-normalised q and k: |q.k| / sqrt(d) <= sqrt(d)
        assert 3.0 <= arms[name]["peak_attn_logit"] <= 4.0 + 1e-3
        assert arms[name]["final_attn_entropy"] >= 0.5
    for name in ("baseline", "z_loss"):
        assert arms[name]["peak_attn_logit"] >= 100  # measured 400-900 over seeds 0-2, W=2, 3
        assert arms[name]["final_attn_entropy"] <= 0.1  # rows collapse onto one key
    for arm in arms.values():
        # at init the logits are ~0: log Z starts at log V (logsumexp >= log V + mean logit)
        assert math.log(32) - 0.05 <= arm["initial_log_z"] <= math.log(32) + 0.5
        assert arm["nonfinite_steps"] == 0
    assert arms["z_loss"]["final_abs_log_z"] <= 1 and arms["stabilised"]["final_abs_log_z"] <= 1
    assert arms["qk_norm"]["final_log_z"] >= 5 and arms["baseline"]["final_log_z"] >= 3
    assert arms["qk_norm"]["excess_loss"] <= 0.1  # QK-norm learns the task at this LR
    assert obs["ratios"]["attn_logit_baseline_over_qk_norm"] >= 25
    assert obs["replicas"] == {"baseline": 0, "qk_norm": 0, "z_loss": 0, "stabilised": 0}
    assert len(arms["baseline"]["curve"]["loss"]) == 15  # every 10th of 150 steps


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_qk_norm", {"qk_norm_bounds_attention_logits"}),
        ("no_z_loss", {"z_loss_anchors_log_z"}),
        ("no_grad_sync", {"replicas_in_sync"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("stability-logits", {"sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing


def test_spikes_are_non_finite_or_above_k_times_the_running_median() -> None:
    calm = [3.0 - 0.01 * i for i in range(40)]
    assert count_spikes(calm, 1.5) == 0
    spiky = [*calm[:30], 9.0, *calm[31:]]
    assert count_spikes(spiky, 1.5) == 1
    assert count_spikes(spiky, 4.0) == 0  # 9 is < 4x the median (~2.8)
    assert count_spikes([*calm[:25], float("nan"), *calm[26:]], 1.5) == 1
    assert count_spikes([10.0, *calm], 1.5) == 0  # no verdict before the window fills


def test_summary_of_an_arm() -> None:
    steps = 30
    series = {
        "qk_norm": True,
        "z_coef": 0.0,
        "loss": [2.0] * steps,
        "max_logit": [1.0] * (steps - 1) + [5.0],
        "entropy": [1.0] * steps,
        "log_z": [3.5] + [-2.0] * (steps - 1),
        "max_abs_log_z": [4.0] * steps,
    }
    got = summarise(series, 1.5, optimal_loss(32, 16))
    assert got["peak_attn_logit"] == 5.0 and got["final_attn_logit"] == 1.4
    assert got["initial_log_z"] == 3.5
    assert got["final_log_z"] == -2.0 and got["final_abs_log_z"] == 2.0
    assert got["excess_loss"] == round(2.0 - 8 * math.log(32) / 16, 4)
    assert got["spikes"] == 0 and got["curve"]["loss"] == [2.0, 2.0, 2.0]


def test_qk_norm_bounds_a_logit_for_any_input() -> None:
    import torch

    from trainer_lab.labs.stability_logits.worker import Attention, make_batch

    torch.manual_seed(0)
    attn = Attention(32, 2, qk_norm=True)
    attn(100 * torch.randn(4, 16, 32))  # huge activations
    assert float(attn.max_logit) <= math.sqrt(16) + 1e-4
    free = Attention(32, 2, qk_norm=False)
    free(100 * torch.randn(4, 16, 32))
    assert float(free.max_logit) > 100
    x, y = make_batch(torch.Generator().manual_seed(0), 3, 16, 32)
    assert x.shape == y.shape == (3, 16)
    assert torch.equal(x[:, 1:], y[:, :-1])
    assert torch.equal(y[:, 8:], x[:, :8])  # the second half copies the first

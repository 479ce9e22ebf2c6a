from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.devices import hide_cuda, needs_cuda
from tests.support.lab_checks import undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab
SMALL = {"d_model": 64, "n_layer": 2, "n_head": 2, "seq_len": 64, "batch": 4, "timed_steps": 2}


def test_cpu_throughput_and_mfu_against_a_measured_peak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_cuda(monkeypatch)  # the CPU path, also on a GPU machine
    result = run_lab("throughput-mfu", {}, 1, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []  # claims can name every observation
    obs = result["observations"]
    assert obs["cuda_visible_devices"] == ""  # the test's environment reached the worker
    assert obs["device"] == "cpu" and obs["dtype"] == "float32"
    assert obs["peak_source"].startswith("measured fp32 matmul")
    # 4 layers, 4 heads of 32, 128 tokens: 12 * 4 * 4 * 32 * 128
    assert obs["flops_per_token"]["attention"] == 786432
    assert obs["flops_per_token"]["dense"] == 6 * obs["matmul_params"]
    assert obs["attention_share"] == round(786432 / obs["flops_per_token"]["total"], 4)
    assert 0.95 <= obs["dense_vs_counted"] <= 1.05  # what the MFU cards claim, on any device
    tokens = obs["batch"] * obs["seq_len"]
    assert obs["tokens_per_s"] == pytest.approx(tokens / obs["step_s"])
    assert obs["mfu"] == pytest.approx(
        obs["tokens_per_s"] * obs["flops_per_token"]["total"] / obs["peak_flops"]
    )
    assert 0 < obs["mfu"] <= 1


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("forget_backward", {"dense_flops_match_counter"}),
        ("no_attention_term", {"attention_term_counted"}),
        ("tiny_peak", {"mfu_below_one"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sabotage: str, failing: set[str]
) -> None:
    hide_cuda(monkeypatch)  # the CPU formulas and peak
    world_size = 2 if sabotage == "tiny_peak" else 1
    params = {**SMALL, "sabotage": sabotage}
    result = run_lab("throughput-mfu", params, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {c["name"] for c in result["checks"] if not c["passed"]} == failing


def test_gpu_peak_lookup_and_flops_formula_without_a_gpu() -> None:
    from trainer_lab.config import TrainConfig
    from trainer_lab.labs.throughput_mfu.worker import datasheet_peak, flops_per_token

    assert datasheet_peak("NVIDIA H200") == 989e12
    assert datasheet_peak("NVIDIA H100 PCIe") == 756e12
    assert datasheet_peak("NVIDIA H100 80GB HBM3") == 989e12
    assert datasheet_peak("Tesla T4") is None  # unknown: the worker measures a bf16 matmul
    cfg = TrainConfig(model="gpt", n_layer=16, n_head=16, d_model=2048, seq_len=2048)
    flops = flops_per_token(cfg, 1000, "none")
    assert flops == {
        "dense": 6000,
        "attention": 12 * 16 * 16 * 128 * 2048,
        "total": 6000 + 12 * 16 * 16 * 128 * 2048,
    }


@needs_cuda
def test_gpu_throughput_uses_bf16_compile_and_a_datasheet_peak(tmp_path: Path) -> None:
    result = run_lab("throughput-mfu", {}, 1, tmp_path, timeout_s=600)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["device"].startswith("cuda") and obs["dtype"] == "bfloat16 autocast"
    assert obs["compiled"] is True
    assert obs["counted_attention_flops_per_token"] > 0  # the counter sees flash attention
    assert 0 < obs["mfu"] <= 1

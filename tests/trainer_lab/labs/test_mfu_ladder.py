from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.support.devices import hide_cuda, needs_cuda
from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab
from trainer_lab.catalogue import get_lab
from trainer_lab.context import LabContext
from trainer_lab.labs.mfu_ladder.report import observe_rungs
from trainer_lab.labs.mfu_ladder.rungs import RUNG_NAMES, RUNGS, TOP_RUNG, flops_per_token

SMALL = {
    "d_model": 32,
    "n_layer": 1,
    "n_head": 2,
    "seq_len": 32,
    "batch": 4,
    "big_batch_factor": 2,
    "warmup_steps": 1,
    "timed_steps": 1,
}


# -- the ladder and the formula (no processes) -------------------------------------------------
def test_each_rung_changes_one_thing_and_keeps_the_rest() -> None:
    assert RUNG_NAMES == (
        "fp32_eager",
        "bf16_autocast",
        "sdpa",
        "compile",
        "fused_adamw",
        "large_batch",
        "activation_checkpointing",
    )
    settings = ("attention", "bf16", "compiled", "fused_adamw", "large_batch", "checkpointing")
    for below, rung in itertools.pairwise(RUNGS):
        changed = [s for s in settings if getattr(below, s) != getattr(rung, s)]
        assert len(changed) == 1, (rung.name, changed)
    top = RUNGS[RUNG_NAMES.index(TOP_RUNG)]
    assert top.bf16 and top.attention == "sdpa" and top.compiled and top.fused_adamw
    assert not top.checkpointing


def test_flops_per_token_is_nanogpts_estimate() -> None:
    assert flops_per_token(1000, 8, 32, 128, 2048, "none") == {
        "dense": 6000,
        "attention": 12 * 8 * 32 * 128 * 2048,
        "total": 6000 + 12 * 8 * 32 * 128 * 2048,
    }
    assert flops_per_token(1000, 2, 2, 32, 64, "forget_backward")["dense"] == 2000
    assert flops_per_token(1000, 2, 2, 32, 64, "no_attention_term")["attention"] == 0


def _rung_event(name: str, times: list[float], warmup: int, **extra: Any) -> dict[str, Any]:
    bf16 = name != "fp32_eager"
    return {
        "event": "rung",
        "name": name,
        "change": name,
        "batch": 8 if name not in ("large_batch", "activation_checkpointing") else 32,
        "seq_len": 64,
        "warmup": warmup,
        "step_times_s": times,
        "logits_rel_diff": 0.0 if name == "fp32_eager" else 3e-3,
        "dtype": "bfloat16 autocast" if bf16 else "float32",
        **extra,
    }


def _report(tmp_path: Path, events: list[dict[str, Any]], peak: float = 1e12) -> LabContext:
    run = LabContext(
        spec=get_lab("mfu-ladder"), params={}, world_size=1, out_dir=tmp_path, deadline=0.0
    )
    run.observe("counted.checkpointing_ratio", 1.2)
    observe_rungs(run, events, 100_000, peak)
    return run


def test_rates_come_from_the_timed_steps_only(tmp_path: Path) -> None:
    events = [
        _rung_event(name, [5.0, 0.2, 0.1, 0.1, 0.3], warmup=2)
        if name != "compile"
        else {"event": "rung", "name": "compile", "change": "c", "skipped": "too slow here"}
        for name in RUNG_NAMES
    ]
    run = _report(tmp_path, events)
    obs = run.observations
    assert obs["ladder"] == [n for n in RUNG_NAMES if n != "compile"]
    assert obs["skipped"] == {"compile": "too slow here"}
    fp32 = obs["rungs"]["fp32_eager"]
    assert fp32["step_s"] == 0.1 and fp32["first_step_s"] == 5.0  # median of 0.1, 0.1, 0.3
    assert fp32["tokens_per_s"] == pytest.approx(8 * 64 / 0.1)
    assert fp32["mfu"] == pytest.approx(8 * 64 / 0.1 * 100_000 / 1e12)
    assert obs["rungs"]["large_batch"]["speedup_vs_previous"] == 4.0  # batch 32 vs 8
    assert obs["checkpointing_cost"] == 1.0
    ac = obs["rungs"]["activation_checkpointing"]
    assert ac["hfu"] == pytest.approx(1.2 * ac["mfu"])
    assert obs["top_rung"] == TOP_RUNG and obs["speedup_total"] == 4.0
    assert all(checks({"checks": run.checks}).values()), run.checks


@pytest.mark.parametrize(
    ("change", "failing"),
    [
        ({"warmup": 0}, {"warmup_excluded"}),
        ({"logits_rel_diff": 7e-2}, {"rungs_compute_the_same_model"}),
        ({"logits_rel_diff": None}, {"rungs_compute_the_same_model"}),
        ({"step_times_s": [1.0, 1e-9]}, {"mfu_in_range"}),
    ],
    ids=["warmup-timed", "different-function", "no-logits", "mfu-over-one"],
)
def test_each_report_check_fails_on_its_own(tmp_path: Path, change: dict, failing: set) -> None:
    events = [_rung_event(name, [1.0, 0.1], warmup=1) for name in RUNG_NAMES]
    events[2].update(change)  # the sdpa rung
    run = _report(tmp_path, events)
    assert {name for name, ok in checks({"checks": run.checks}).items() if not ok} == failing


# -- the lab ------------------------------------------------------------------------------------
@pytest.mark.lab
def test_cpu_ladder_measures_every_rung_but_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_cuda(monkeypatch)
    result = run_lab("mfu-ladder", {}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "ok", result
    assert undeclared(result) == []  # claims can name every observation
    obs = result["observations"]
    # hide_cuda above forces the CPU path; this checks the forcing reached the worker
    assert obs["device"] == "cpu" and obs["cuda_visible_devices"] == ""
    assert obs["ladder"] == [n for n in RUNG_NAMES if n != "compile"]
    assert "torch.compile on CPU" in obs["skipped"]["compile"]
    # 2 layers, 4 heads of 32, 64 tokens; N = 2 x 12 x 128^2 + 128 x 256 (head)
    assert obs["matmul_params"] == 2 * 12 * 128 * 128 + 128 * 256
    assert obs["flops_per_token"]["attention"] == 12 * 2 * 4 * 32 * 64
    assert obs["counted"]["dense"] == obs["flops_per_token"]["dense"]  # exact: no biases
    assert obs["counted"]["attention"] == obs["flops_per_token"]["attention"]
    assert obs["counted"]["sdpa_attention"] == 0  # the counter misses the CPU SDPA kernel
    assert obs["dense_formula_vs_counted"] == obs["attention_formula_vs_counted"] == 1.0
    counted = obs["counted"]["dense"] + obs["counted"]["attention"]
    assert obs["counted"]["attention_share"] == round(obs["counted"]["attention"] / counted, 4)
    assert 1.05 < obs["counted"]["checkpointing_ratio"] < obs["counted"]["full_recompute_ratio"]
    for name in obs["ladder"]:
        rung = obs["rungs"][name]
        tokens = rung["batch"] * 64
        assert rung["tokens_per_s"] == pytest.approx(tokens / rung["step_s"])
        assert 0 < rung["mfu"] <= 1
    assert obs["rungs"]["large_batch"]["batch"] == 4 * obs["rungs"]["fp32_eager"]["batch"]
    assert obs["top_mfu"] == obs["rungs"]["large_batch"]["mfu"]


@pytest.mark.lab
@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("forget_backward", {"dense_term_matches_counter"}),
        ("no_attention_term", {"attention_term_matches_counter"}),
        ("tiny_peak", {"mfu_in_range"}),
        ("sdpa_not_causal", {"rungs_compute_the_same_model"}),
        ("no_checkpointing", {"checkpointing_recomputes_forward"}),
        ("no_warmup", {"warmup_excluded"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sabotage: str, failing: set[str]
) -> None:
    hide_cuda(monkeypatch)
    result = run_lab("mfu-ladder", {**SMALL, "sabotage": sabotage}, 1, tmp_path, timeout_s=180)
    assert result["status"] == "failed", result
    assert {name for name, ok in checks(result).items() if not ok} == failing


@pytest.mark.lab
@needs_cuda
def test_gpu_ladder_climbs_to_its_top_rung(tmp_path: Path) -> None:
    result = run_lab("mfu-ladder", {}, 1, tmp_path, timeout_s=900)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["device"].startswith("cuda") and obs["skipped"] == {}
    assert obs["ladder"] == list(RUNG_NAMES)
    assert obs["counted"]["sdpa_attention"] > 0  # the counter has flash attention's formula
    rungs = obs["rungs"]
    assert rungs["bf16_autocast"]["tokens_per_s"] > 2 * rungs["fp32_eager"]["tokens_per_s"]
    assert obs["top_mfu"] > rungs["bf16_autocast"]["mfu"]
    assert obs["checkpointing_cost"] < 1

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.devices import hide_cuda
from tests.support.paths import REPO
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_ddp_matches_single_process_at_world_size_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_cuda(monkeypatch)  # gloo on CPU, also where 2 GPUs would make it NCCL
    result = run_lab("ddp-baseline", {}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert all(c["passed"] for c in result["checks"])
    obs = result["observations"]
    assert obs["grad_mismatch_steps"] == 0
    assert obs["max_rel_loss_diff"] <= 1e-5
    assert result["env"]["backend"] == "gloo" and result["env"]["world_size"] == 2
    on_disk = json.loads((tmp_path / "result.json").read_text())
    assert on_disk["checks"] == result["checks"]
    assert (tmp_path / "events-rank1.jsonl").exists()


def test_skipping_the_gradient_sync_fails_the_checks_via_cli(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "drill",
            "lab",
            "run",
            "ddp-baseline",
            "--param",
            "sabotage=no_grad_sync",
            "--param",
            "steps=4",
            "--json",
            "--out",
            str(tmp_path / "run"),  # tmp_path also holds DRILL_HOME, where the run is recorded
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    failed = {c["name"] for c in result["checks"] if not c["passed"]}
    assert {"grads_identical_across_ranks", "losses_match"} <= failed


@pytest.mark.parametrize("world_size", [2, 3])
def test_stale_gradients_keep_ranks_in_step_but_change_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_size: int
) -> None:
    hide_cuda(monkeypatch)
    result = run_lab("ddp-baseline", {"grad_sync": "stale"}, world_size, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["weights_identical_across_ranks"] is True and obs["grad_mismatch_steps"] == 0
    assert obs["max_rel_loss_diff"] > 1e-3  # not synchronous SGD any more
    assert {c["name"] for c in result["checks"]} == {
        "stale_changes_the_trajectory",
        "grads_identical_across_ranks",
        "weights_identical_across_ranks",
    }


def test_stale_gradients_without_the_average_let_the_ranks_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_cuda(monkeypatch)
    params = {"grad_sync": "stale", "sabotage": "no_grad_sync"}
    result = run_lab("ddp-baseline", params, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert result["observations"]["weights_identical_across_ranks"] is False

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_corrupt_sample_is_caught_skipped_and_named(tmp_path: Path) -> None:
    result = run_lab("nan-hunt", {}, 2, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result
    assert undeclared(result) == []  # claims can name every observation
    obs = result["observations"]
    k = result["params"]["corrupt_step"]
    assert obs["first_nonfinite_step"] == k
    assert obs["nonfinite_lag_steps"] == 0 and obs["guard_named_corrupt_sample"] is True
    assert obs["skipped_steps"] == [k]
    assert obs["reported_sample_ids"] == [obs["corrupt_sample_id"]]
    assert len(obs["grad_norm_history"]) == k - 1
    assert obs["anomaly"]["op"].endswith("Backward0")
    assert obs["anomaly"]["first_nonfinite_module"].startswith("net.0")
    assert obs["spike_ratio"]["no_warmup"] >= 10
    lr = obs["lr"]
    assert lr["sgd_clip"]["max_update_norm"] <= 4.0 * (1 + 1e-3)
    assert lr["sgd_no_clip"]["final_loss"] == "nan"  # unclipped SGD at this LR diverges
    # clipping does not bound AdamW's step: its largest update is the same with and without
    assert lr["adam_clip"]["max_update_norm"] == pytest.approx(
        lr["adam_no_warmup"]["max_update_norm"], rel=1e-3
    )


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        (
            "no_corruption",
            {"corrupt_sample_breaks_loss", "guard_skips_and_names_sample", "anomaly_names_op"},
        ),
        ("no_guard", {"guard_skips_and_names_sample"}),
        ("warmup", {"lr_spike_without_warmup"}),
        ("no_clip", {"clipping_bounds_update"}),
    ],
)
def test_each_check_fails_when_its_behaviour_is_broken(
    tmp_path: Path, sabotage: str, failing: set[str]
) -> None:
    params = {"sabotage": sabotage, "steps": 14, "lr_steps": 20}
    result = run_lab("nan-hunt", params, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed", result
    assert {c["name"] for c in result["checks"] if not c["passed"]} == failing
    if sabotage == "no_corruption":  # the cards' observations say so too
        obs = result["observations"]
        assert obs["nonfinite_lag_steps"] is None and obs["guard_named_corrupt_sample"] is False

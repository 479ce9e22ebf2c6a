"""oom-debug: the snapshot at a provoked OOM names the leak; expandable segments fit a request
the native allocator's fragmentation refuses. GPU only: on a CPU the lab says so and cards
scoped `where: device == 'cuda'` are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.devices import hide_cuda, needs_cuda
from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_on_a_cpu_the_lab_reports_its_device_and_a_gpu_card_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from drill.decks.models import Card
    from drill.labs.verify import LinkedCard, evaluate_card

    hide_cuda(monkeypatch)
    result = run_lab("oom-debug", {}, 1, tmp_path, timeout_s=60)
    assert result["status"] == "failed", result
    assert result["observations"] == {"device": "cpu"}
    assert checks(result) == {"runs_on_a_gpu": False}
    lab = {
        "run": "oom-debug",
        "world_size": 1,
        "where": "device == 'cuda'",
        "expect": ["snapshot.top_function == 'keep_step_output'"],
    }
    card = Card.model_validate({"id": "c", "level": "easy", "front": "q", "back": "a", "lab": lab})
    [row] = evaluate_card(LinkedCard("d", card), result)
    assert row.skipped and row.observed == "not where device == 'cuda' (device=cpu)"


@needs_cuda
def test_the_snapshot_names_the_leak_and_expandable_segments_fit(tmp_path: Path) -> None:
    result = run_lab("oom-debug", {}, 1, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["device"] == "cuda" and all(checks(result).values())
    snap, leak = obs["snapshot"], obs["leak"]
    assert leak["oom_step"] is not None and leak["kept_mib"] > 0
    assert snap["top_function"] == "keep_step_output" and snap["top_share"] > 0.5
    assert snap["oom_in_trace"] is True and snap["blocks_with_stack"] == 1.0
    native, expandable = obs["fragment"]["native"], obs["fragment"]["expandable"]
    assert native["oom"] is True and native["free_cached_exceeds_request"] is True
    assert expandable["oom"] is False and expandable["alloc_conf"] == "expandable_segments:True"


@needs_cuda
@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_history", {"snapshot_names_the_leak", "oom_recorded_in_trace"}),
        ("conf_after_init", {"expandable_segments_fit"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("oom-debug", {"sabotage": sabotage}, 1, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing
    if sabotage == "no_history":
        assert result["observations"]["snapshot"]["top_function"] is None

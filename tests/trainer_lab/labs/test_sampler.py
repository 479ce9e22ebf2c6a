from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.catalogue import get_lab
from trainer_lab.driver import execute
from trainer_lab.labs.sampler.drive import coverage, epoch_counts, overlapping_steps

pytestmark = pytest.mark.lab


def test_overlap_and_coverage_helpers() -> None:
    steps = {1: {0: [0, 1], 1: [2, 3]}, 2: {0: [4, 0], 1: [0, 5]}}
    assert overlapping_steps(steps) == [2]
    counts = epoch_counts(steps, {1: 0, 2: 0}, 0)
    assert coverage(counts, 7) == (2, 1)  # id 0 seen 3 times, id 6 never


def test_sampler_lab_passes_at_world_size_2(tmp_path: Path) -> None:
    spec = get_lab("sampler")
    result = execute(spec, spec.resolve_params({}), 2, tmp_path, timeout_s=90)
    assert result["status"] == "ok", result["error"] or result["checks"]
    obs = result["observations"]
    assert obs["padded_duplicates"] == obs["expected_padding"] == 1
    assert obs["drop_last"]["dropped"] == obs["drop_last"]["expected_dropped"] > 0
    assert obs["no_sampler_state"]["duplicated"] > 0 and obs["no_sampler_state"]["skipped"] > 0
    assert (tmp_path / "runs" / "resume" / "events-rank1.jsonl").exists()


def test_resume_without_sampler_state_fails_exactly_once(tmp_path: Path) -> None:
    spec = get_lab("sampler")
    params = spec.resolve_params({"sabotage": "skip_sampler_state"})
    result = execute(spec, params, 2, tmp_path, timeout_s=90)
    assert result["status"] == "failed"
    failed = {c["name"] for c in result["checks"] if not c["passed"]}
    assert failed == {"resume_continues_sequence", "resume_exactly_once"}
    assert result["observations"]["resume"]["duplicated"] > 0

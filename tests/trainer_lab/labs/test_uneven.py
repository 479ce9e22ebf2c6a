"""uneven lab: without Join the run fails, with Join it completes with equal weights; each
check fails when its guarded behaviour is removed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def run(tmp_path: Path, **params: Any) -> dict[str, Any]:
    result = run_lab("uneven", {"collective_timeout_s": 2.0, **params}, 2, tmp_path, 90)
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    return result


def test_join_completes_with_equal_weights_and_no_join_fails(tmp_path: Path) -> None:
    result = run(tmp_path)
    assert result["status"] == "ok", result
    obs = result["observations"]
    assert obs["join"]["steps_per_rank"] == {"0": 6, "1": 4}
    assert obs["join"]["weights_equal"] is True
    assert obs["nojoin"]["failed"] is True
    # The longer rank waits in a collective its peer never joins: gloo's timeout ends it, or,
    # when the peer's own timeout fired first and it exited (seen under load in a full run),
    # the closed connection does. Either way the failure is the missed collective, not a crash.
    assert any(
        cause in obs["nojoin"]["error"] for cause in ("Timed out", "Connection closed by peer")
    ), obs["nojoin"]["error"]


def test_even_inputs_make_the_no_join_check_fail(tmp_path: Path) -> None:
    result = run(tmp_path, extra_batches=0)
    assert result["status"] == "failed"
    assert checks(result) == {
        "with_join_completes": True,
        "with_join_weights_equal": True,
        "without_join_fails": False,
    }


def test_dropping_join_fails_the_join_checks(tmp_path: Path) -> None:
    result = run(tmp_path, join=False)
    assert result["status"] == "failed"
    got = checks(result)
    assert got["with_join_completes"] is False and got["with_join_weights_equal"] is False

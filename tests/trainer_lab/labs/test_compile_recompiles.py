"""compile-recompiles: Dynamo's own counters for dynamic shapes, guards on ints, .item() graph
breaks and checkpointing inside a compiled region."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def test_compile_counts(tmp_path: Path) -> None:
    result = run_lab("compile-recompiles", {}, 1, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["shapes"]["graphs"] == 2
    assert obs["attr_int"]["graphs"] == obs["recompile_limit"]
    assert obs["item"]["graphs"] >= 2  # the graph before the break and the one after


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("dynamic_false", {"dynamic_shapes_stop_recompiling"}),
        ("buffer_as_int", {"changing_int_recompiles_to_the_limit"}),
        ("capture_scalars", {"item_breaks_the_graph"}),
        ("disable_checkpoint", {"checkpoint_compiles_whole"}),
        ("raise_recompile_limit", {"changing_int_recompiles_to_the_limit"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("compile-recompiles", {"sabotage": sabotage}, 1, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing

"""Every lab gives the same verdicts from the warm launcher and from torchrun (real runs of every
bundled lab, twice): the same status, the same checks passing, the same observations named."""

from __future__ import annotations

import pytest

from trainer_lab.api import run_lab
from trainer_lab.catalogue import CATALOGUE
from trainer_lab.devices import visible_gpus

pytestmark = pytest.mark.lab
GPU_ONLY = frozenset({"oom-debug"})


def names(tree: dict, prefix: str = "") -> set[str]:
    found = set()
    for key, value in tree.items():
        found.add(prefix + key)
        if isinstance(value, dict):
            found |= names(value, f"{prefix}{key}.")
    return found


@pytest.mark.parametrize("lab", sorted(CATALOGUE))
def test_a_lab_gives_the_same_verdicts_from_both_launchers(tmp_path, lab):
    # a GPU-only lab on a CPU launches nothing and fails its own runs_on_a_gpu check, the same
    # way from both launchers
    expected = "failed" if lab in GPU_ONLY and visible_gpus() == 0 else "ok"
    cold = run_lab(lab, out_dir=tmp_path / "torchrun", mode="torchrun")
    warm = run_lab(lab, out_dir=tmp_path / "warm", mode="warm")
    assert (warm["status"], cold["status"]) == (expected, expected), (warm["error"], cold["error"])
    verdicts = [(c["name"], c["passed"]) for c in cold["checks"]]
    assert [(c["name"], c["passed"]) for c in warm["checks"]] == verdicts
    assert names(warm["observations"]) == names(cold["observations"])
    launches = [launch["variant"] for launch in cold["launches"]]
    assert [launch["variant"] for launch in warm["launches"]] == launches

"""Every lab gives the same verdicts from the warm launcher and from torchrun (real runs of every
bundled lab, twice): the same status, the same checks passing, the same observations named."""

from __future__ import annotations

import pytest

from trainer_lab.api import run_lab
from trainer_lab.catalogue import CATALOGUE
from trainer_lab.cluster.nodes import lab_nodes
from trainer_lab.devices import visible_gpus

pytestmark = pytest.mark.lab
GPU_ONLY = frozenset({"oom-debug"})
# a cluster lab starts its own torchrun agent per emulated node (trainer_lab.cluster): the
# launcher's mode never reaches its ranks, so running it twice would compare a run with itself
ONE_NODE_LABS = sorted(name for name, spec in CATALOGUE.items() if lab_nodes(spec) == 1)


def test_only_the_cluster_labs_are_left_out() -> None:
    left_out = sorted(set(CATALOGUE) - set(ONE_NODE_LABS))
    assert left_out and all(lab_nodes(CATALOGUE[name]) > 1 for name in left_out)
    assert {"resume", "elastic-restart", "hang"} <= set(ONE_NODE_LABS)


def names(tree: dict, prefix: str = "") -> set[str]:
    found = set()
    for key, value in tree.items():
        found.add(prefix + key)
        if isinstance(value, dict):
            found |= names(value, f"{prefix}{key}.")
    return found


@pytest.mark.parametrize("lab", ONE_NODE_LABS)
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

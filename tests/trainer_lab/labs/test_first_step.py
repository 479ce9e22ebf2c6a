"""first-step: one rank reads the checkpoint and broadcasts it; every rank ends with the saved
weights and optimizer state; each sabotage fails exactly its check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab
from trainer_lab.labs.first_step.drive import read_once

pytestmark = pytest.mark.lab

SMALL = {"hidden": 256, "steady_steps": 4}  # a 2.4 MB checkpoint: start-up dominates anyway


@pytest.mark.parametrize("world_size", [2, 3])
def test_one_reader_broadcasts_the_whole_state(tmp_path: Path, world_size: int) -> None:
    result = run_lab("first-step", SMALL, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    ckpt, restart, contrast = obs["checkpoint"], obs["restart"], obs["contrast"]
    # MLP 256 -> 256 -> 256 -> 256: three Linear layers with biases, float32
    assert ckpt["params"] == 3 * (256 * 256 + 256)
    assert ckpt["model_bytes"] == 4 * ckpt["params"]
    # AdamW: two moments per parameter plus one float32 `step` per parameter tensor (6)
    assert ckpt["optimizer_bytes"] == 2 * ckpt["model_bytes"] + 6 * 4
    file_bytes = ckpt["file_bytes"]
    assert file_bytes > ckpt["model_bytes"] + ckpt["optimizer_bytes"]  # plus zip and pickle
    reads = restart["read_per_rank"]
    assert reads[1:] == [0] * (world_size - 1) and restart["readers"] == 1
    assert abs(reads[0] - file_bytes) <= 0.01 * file_bytes
    assert restart["rchar_per_rank"][0] >= reads[0]  # the syscalls saw at least those bytes
    # the broadcast carries exactly the saved tensors, nothing twice
    assert restart["broadcast_bytes"] == ckpt["model_bytes"] + ckpt["optimizer_bytes"]
    assert restart["broadcast_over_state"] == 1.0
    # fp32 weights + two fp32 Adam moments: a restart moves 3x the weights' bytes
    assert restart["broadcast_over_weights"] == pytest.approx(3.0, abs=1e-3)
    assert restart["ranks_missing_weights"] == restart["ranks_missing_optimizer"] == 0
    assert restart["ranks_diverged_after_steps"] == 0
    assert contrast["read_per_rank"] == [reads[0]] * world_size
    assert contrast["readers"] == world_size
    assert contrast["read_over_file"] == pytest.approx(world_size, rel=0.01)
    phases = obs["phases"]
    assert set(phases) == {
        "import_torch_s",
        "previous_job_s",
        "process_start_to_task_s",
        "new_group_s",
        "model_build_s",
        "checkpoint_load_s",
        "first_step_s",
        "steady_step_s",
        "restart_to_first_step_s",
    }
    assert all(value > 0 for value in phases.values())
    assert obs["first_over_steady"] > 0


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("every_rank_reads", {"checkpoint_read_once"}),
        ("wrong_source", {"weights_match_checkpoint", "optimizer_state_matches_checkpoint"}),
        ("skip_optimizer", {"optimizer_state_matches_checkpoint"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("first-step", {**SMALL, "sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing


def test_read_once_wants_one_reader_reading_about_the_file() -> None:
    assert read_once([1000, 0, 0], 1000)
    assert read_once([1040, 0], 1000)
    assert not read_once([1000, 1000], 1000)  # every rank read
    assert not read_once([0, 0], 1000)  # nobody read
    assert not read_once([600, 0], 1000)  # a partial read
    assert not read_once([2000, 0], 1000)  # read twice


def test_counting_reader_sees_every_byte_torch_load_reads(tmp_path: Path) -> None:
    import torch

    from trainer_lab.labs.first_step.worker import digest, pack, read_checkpoint, unpack

    state = {"w": torch.arange(100_000.0), "opt": {"state": {0: {"step": torch.tensor(3.0)}}}}
    path = tmp_path / "ckpt.pt"
    torch.save(state, path)
    loaded, counted = read_checkpoint(path)
    size = path.stat().st_size
    assert abs(counted["bytes"] - size) <= 0.05 * size and counted["calls"] > 0
    assert counted["rchar"] in (-1,) or counted["rchar"] >= counted["bytes"]
    assert digest(loaded) == digest(state)
    tensors: list[torch.Tensor] = []
    skeleton = pack(state, tensors)
    assert len(tensors) == 2 and skeleton["w"] == {
        "__tensor__": 1,
        "shape": [100_000],
        "dtype": "torch.float32",
    }
    assert digest(unpack(skeleton, tensors)) == digest(state)
    assert digest(unpack(skeleton, [torch.zeros(()), torch.zeros(100_000)])) != digest(state)

"""The backend choice shown before a lab runs, from the visible GPUs (no CUDA needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trainer_lab.devices import backend_choice, visible_gpus

CUDA_VISIBLE_AT_IMPORT = os.environ.get("CUDA_VISIBLE_DEVICES")  # before any test's fixtures


def test_cuda_visible_devices_decides_when_set(tmp_path: Path) -> None:
    (tmp_path / "nvidia0").touch()
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1"}, tmp_path) == 2
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}, tmp_path) == 0
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}, tmp_path) == 0
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,-1,2"}, tmp_path) == 1  # CUDA stops at -1


def test_device_files_count_otherwise(tmp_path: Path) -> None:
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"):
        (tmp_path / name).touch()
    assert visible_gpus({}, tmp_path) == 2
    assert visible_gpus({}, tmp_path / "missing") == 0


def test_the_choice_follows_the_workers_rule() -> None:
    assert backend_choice(2, gpus=0) == "gloo on CPU (no CUDA visible)"
    assert backend_choice(2, gpus=8) == "nccl, one process per GPU (2 of 8 GPUs)"
    assert backend_choice(4, gpus=2) == "gloo on CPU (4 ranks > 2 visible GPUs)"


def test_a_test_not_marked_gpu_runs_its_labs_on_the_cpu_path() -> None:
    # tests/conftest.py: the lab processes of this test inherit CUDA_VISIBLE_DEVICES=""
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == ""
    assert visible_gpus() == 0
    assert backend_choice(2) == "gloo on CPU (no CUDA visible)"


@pytest.mark.gpu
def test_a_test_marked_gpu_keeps_the_machines_view_of_cuda() -> None:
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == CUDA_VISIBLE_AT_IMPORT

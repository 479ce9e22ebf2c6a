"""Which path starts a process (torch-free, no process started except the cold fallback)."""

from __future__ import annotations

import os
import subprocess

import pytest

from trainer_lab.warm import start
from trainer_lab.warm.job import Job


@pytest.mark.parametrize(
    ("value", "gpu", "expected"),
    [
        ("torchrun", False, "torchrun"),
        ("cold", False, "torchrun"),
        ("warm", True, "warm"),
        ("auto", False, "warm"),
        ("auto", True, "torchrun"),
        ("", False, "warm"),
        (" WARM ", False, "warm"),
    ],
)
def test_the_launcher_setting_and_the_machine_pick_the_path(monkeypatch, value, gpu, expected):
    monkeypatch.setenv(start.LAUNCHER_ENV, value)
    monkeypatch.setattr(start, "has_nvidia_gpu", lambda: gpu)
    assert start.default_mode() == expected


def test_hidden_gpus_count_as_none(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert not start.has_nvidia_gpu()


def test_a_job_that_changes_what_an_interpreter_reads_at_start_runs_cold():
    base = {"PATH": "/bin", "PYTHONPATH": "/a"}
    assert start.startup_differs({**base, "RANK": "1", "MY_VAR": "x"}, base) == []
    assert start.startup_differs({**base, "PYTHONPATH": "/b"}, base) == ["PYTHONPATH"]
    assert start.startup_differs({**base, "PYTHONHASHSEED": "0"}, base) == ["PYTHONHASHSEED"]
    assert start.startup_differs({**base, "TORCHINDUCTOR_CACHE_DIR": "/c"}, base) == [
        "TORCHINDUCTOR_CACHE_DIR"
    ]
    assert start.startup_differs({"PATH": "/bin"}, base) == ["PYTHONPATH"]


def test_without_a_warm_server_the_process_starts_cold(monkeypatch, tmp_path):
    monkeypatch.setattr(start, "default_server", lambda: None)
    out = tmp_path / "out.log"
    with out.open("wb") as log:
        proc = start.start_process(
            Job("trainer_lab.driver", ["--help"], dict(os.environ)), log.fileno(), mode="warm"
        )
    assert isinstance(proc, subprocess.Popen)
    assert proc.wait(timeout=60) == 0
    assert "usage: python -m trainer_lab.driver" in out.read_text()


def test_torchrun_is_the_cold_name_of_the_warm_agent():
    job = Job(start.TORCHRUN, ["--standalone", "-m", "x"], {})
    assert start.cold_command(job)[1:] == ["-m", "trainer_lab._torchrun", "--standalone", "-m", "x"]

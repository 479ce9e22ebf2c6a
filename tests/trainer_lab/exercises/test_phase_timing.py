"""phase-timing's checker judged in process (tests/support/phase_timing.py): wrong timers fail
for their timing reason, and the margin holds by construction, not by the machine's speed."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.support.phase_timing import check_timer
from trainer_lab.exercises.catalogue import EXERCISES
from trainer_lab.exercises.phase_timing import check

WRONG = Path(__file__).with_name("wrong")


@pytest.fixture
def instant_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine on which a matmul costs nothing: the checker's work matrix is 1x1."""
    monkeypatch.setattr(torch, "randn", lambda *_a, **_k: torch.ones(1, 1))


def test_a_timer_keeping_the_last_step_fails_however_fast_the_machine(
    instant_machine: None, tmp_path: Path
) -> None:
    got = check_timer(WRONG / "phase_timing_last_step.py", tmp_path / "wrong")
    assert not got["cpu_times_phases"]["passed"]
    assert "reading is lost or overwritten" in got["cpu_times_phases"]["detail"]
    right = check_timer(EXERCISES["phase-timing"].solution_path, tmp_path / "right")
    assert right["cpu_times_phases"]["passed"], right["cpu_times_phases"]["detail"]


def test_every_phase_works_longer_per_step_than_its_whole_tolerance() -> None:
    # a lost reading is short by one step's work: it must exceed the tolerance severalfold
    assert min(check.CPU_WORK_S.values()) > 4 * check.PHASE_TOLERANCE_S


def test_a_cpu_timer_that_syncs_when_the_machine_has_a_gpu_is_told_so(tmp_path: Path) -> None:
    got = check_timer(WRONG / "phase_timing_machine_guard.py", tmp_path)
    assert not got["cpu_times_phases"]["passed"]
    assert got["cpu_times_phases"]["detail"].startswith(
        "on CPU, on a machine that has a CUDA device, the timer called "
        "torch.cuda/accelerator.synchronize(...)"
    )
    assert "guarded by whether the machine has a device" in got["cpu_times_phases"]["detail"]
    assert got["waits_for_the_device"]["passed"] and got["excludes_other_work"]["passed"]


def test_an_unconditional_sync_is_not_blamed_on_a_machine_guard(tmp_path: Path) -> None:
    detail = check_timer(WRONG / "phase_timing_always_sync.py", tmp_path)["cpu_times_phases"]
    assert "not conditional on device.type == 'cuda'" in detail["detail"]
    assert "guarded by whether the machine" not in detail["detail"]


def test_a_guard_read_once_at_import_is_named_as_no_device_call(tmp_path: Path) -> None:
    got = check_timer(WRONG / "phase_timing_import_guard.py", tmp_path)
    assert got["cpu_times_phases"]["passed"]
    assert not got["waits_for_the_device"]["passed"]
    assert "no device call in the whole CUDA run" in got["waits_for_the_device"]["detail"]

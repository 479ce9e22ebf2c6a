"""The preemption fault's logic in this process (no launch): the second SIGTERM comes as a file
written into the checkpoint dir is closed, whatever wrote it (fswatch.py's hook), with half the
bytes on disk; a handler that returns lets the write finish whole, one that raises leaves the
half. A late rank's SIGTERM waits for its step N + late_by."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import term_records
from trainer_lab.usercode.fswatch import FsWatch
from trainer_lab.usercode.recorder import Recorder
from trainer_lab.usercode.sigterm import TermFault

DATA = bytes(range(256)) * 40


class Preempted(Exception):
    """What a force-quit handler raises (a stand-in for its sys.exit)."""


@pytest.fixture
def sizes_at_signal() -> Iterator[list[int]]:
    """SIGTERM handled here while the test runs: each signal appends to the list (the test sets
    what the handler sees and does)."""
    seen: list[int] = []
    previous = signal.getsignal(signal.SIGTERM)
    yield seen
    signal.signal(signal.SIGTERM, previous)


def fault_in(tmp_path: Path, *, first: int = 0, late_by: int = 0) -> tuple[TermFault, FsWatch]:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    observe = tmp_path / "observe"
    observe.mkdir()
    recorder = Recorder(observe, 0, {protocol.CKPT_ENV: str(ckpt)})
    watch = FsWatch(recorder, {})
    fault = TermFault(recorder, 2, first, again=True, late_by=late_by, watch=watch)
    fault.hook_writes()
    return fault, watch


def written(watch: FsWatch, path: Path, data: bytes) -> int:
    """A file written with os.open + os.write into the dir, watched as fswatch's os.open does;
    its fd, still open."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    watch.opened(fd, str(path), "os.open", append=False)
    return fd


def size(path: Path) -> int:
    return path.stat().st_size if path.exists() else -1


def whys(fault: TermFault) -> list[str]:
    return [r["why"] for r in term_records(fault.rec.dir, 0)]


def test_a_handler_that_returns_sees_half_the_file_and_the_write_ends_whole(
    tmp_path, sizes_at_signal
):
    fault, watch = fault_in(tmp_path)
    path = fault.rec.ckpt_dir / "ckpt.pt"  # type: ignore[operator]
    signal.signal(signal.SIGTERM, lambda *_: sizes_at_signal.append(size(path)))
    fault.rec.pstep = 2
    fault.late("dataset read")  # rank 0 is first: only its post-step hook sends the first
    assert fault.sent == 0
    fault._on_post_step(None, (), {})
    fd = written(watch, path, DATA)
    watch.closing(fd)
    os.close(fd)
    assert sizes_at_signal == [-1, len(DATA) // 2]  # the first signal, then the second mid-save
    assert path.read_bytes() == DATA
    assert whys(fault) == ["after step 2", "during the save of ckpt.pt"]


def test_a_handler_that_exits_leaves_half_the_file(tmp_path, sizes_at_signal):
    fault, watch = fault_in(tmp_path)
    path = fault.rec.ckpt_dir / "ckpt.pt"  # type: ignore[operator]

    def force_quit(*_: object) -> None:
        sizes_at_signal.append(1)
        if len(sizes_at_signal) > 1:
            raise Preempted

    signal.signal(signal.SIGTERM, force_quit)
    fault.rec.pstep = 2
    fault._on_post_step(None, (), {})
    fd = written(watch, path, DATA)
    with pytest.raises(Preempted):
        watch.closing(fd)
    os.close(fd)
    assert path.read_bytes() == DATA[: len(DATA) // 2]


def test_an_empty_file_or_a_write_before_the_first_sigterm_is_not_cut(tmp_path, sizes_at_signal):
    fault, watch = fault_in(tmp_path)
    signal.signal(signal.SIGTERM, lambda *_: sizes_at_signal.append(0))
    path = fault.rec.ckpt_dir / "periodic.pt"  # type: ignore[operator]
    fd = written(watch, path, DATA)
    watch.closing(fd)  # step 0: no SIGTERM yet
    os.close(fd)
    fault.rec.pstep = 2
    fault._on_post_step(None, (), {})
    marker = fault.rec.ckpt_dir / "COMPLETE"  # type: ignore[operator]
    fd = written(watch, marker, b"")
    watch.closing(fd)  # an empty create: atomic, nothing to cut
    os.close(fd)
    assert fault.sent == 1 and path.read_bytes() == DATA


def test_a_late_rank_gets_its_sigterm_only_after_step_n_plus_late_by(tmp_path, sizes_at_signal):
    fault, _ = fault_in(tmp_path, first=1, late_by=2)  # this rank (0) is the late one
    signal.signal(signal.SIGTERM, lambda *_: sizes_at_signal.append(0))
    for step in (2, 3):
        fault.rec.pstep = step
        fault.late("dataset read")
        assert fault.sent == 0
    fault.rec.pstep = 4
    fault.late("dist.all_reduce")
    assert whys(fault) == ["dist.all_reduce after step 4"]


def test_a_late_rank_that_writes_into_the_dir_gets_both_sigterms_there(tmp_path, sizes_at_signal):
    fault, watch = fault_in(tmp_path, first=1)
    path = fault.rec.ckpt_dir / "rank0.pt"  # type: ignore[operator]
    signal.signal(signal.SIGTERM, lambda *_: sizes_at_signal.append(path.stat().st_size))
    fault.rec.pstep = 2
    fd = written(watch, path, DATA)
    watch.closing(fd)
    os.close(fd)
    assert whys(fault) == ["checkpoint write after step 2", "during the save of rank0.pt"]
    assert sizes_at_signal == [len(DATA), len(DATA) // 2] and path.read_bytes() == DATA

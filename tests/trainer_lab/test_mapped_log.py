"""The memory-mapped append log under the events files: what a killed writer leaves, how the
next writer and the readers treat it, growth past a chunk, forks and a full disk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.paths import REPO
from trainer_lab.events import EventWriter, events_path, read_events, trim_run_events
from trainer_lab.mapped_log import CHUNK, MappedLog, content_end, open_log, release_log, trim


def _run(code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, timeout=60
    )


def test_close_leaves_exactly_the_content(tmp_path: Path) -> None:
    log = MappedLog(tmp_path / "x.jsonl")
    log.append(b'{"a":1}\n')
    assert (tmp_path / "x.jsonl").stat().st_size == CHUNK  # grown ahead while open
    log.close()
    log.close()
    assert (tmp_path / "x.jsonl").read_bytes() == b'{"a":1}\n'
    with pytest.raises(ValueError, match="closed"):
        log.append(b"late\n")


def test_appends_past_several_chunks_arrive_whole_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    log = MappedLog(path)
    lines = [b"%06d %s\n" % (i, b"x" * 500) for i in range(3 * CHUNK // 500)]
    for line in lines:
        log.append(line)
    log.close()
    assert path.read_bytes() == b"".join(lines)


def test_a_killed_writer_leaves_a_nul_tail_that_readers_and_trim_handle(tmp_path: Path) -> None:
    done = _run(
        f"""
        import os, signal
        from pathlib import Path
        from trainer_lab.events import EventWriter
        writer = EventWriter(Path({str(tmp_path)!r}), 1)
        for step in range(1, 6):
            writer.write("step", step=step)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]
    path = events_path(tmp_path, 1)
    raw = path.read_bytes()
    assert raw.endswith(b"\0") and len(raw) > content_end(os.open(path, os.O_RDONLY), len(raw))
    assert [e["step"] for e in read_events(path)] == [1, 2, 3, 4, 5]
    trim_run_events(tmp_path)
    assert path.read_bytes() == raw.rstrip(b"\0") and path.read_bytes().endswith(b"\n")
    trim(path)  # nothing left to cut
    assert path.read_bytes() == raw.rstrip(b"\0")


def test_the_next_writer_starts_after_a_killed_ones_content_on_a_fresh_line(
    tmp_path: Path,
) -> None:
    path = events_path(tmp_path, 0)
    path.write_bytes(b'{"event":"a"}\n{"event":"tor' + b"\0" * 1000)  # killed mid-line
    writer = EventWriter(tmp_path, 0)
    writer.write("b")
    writer.close()
    assert path.read_bytes().startswith(b'{"event":"a"}\n{"event":"tor\n{"event":"b"')
    assert [e["event"] for e in read_events(path)] == ["a", "b"]  # the torn line is skipped


def test_writers_in_one_process_share_one_map(tmp_path: Path) -> None:
    first, second = open_log(tmp_path / "x"), open_log(tmp_path / "x")
    assert first is second
    first.append(b"1\n")
    release_log(first)
    second.append(b"2\n")  # still open for the other user
    release_log(second)
    assert (tmp_path / "x").read_bytes() == b"1\n2\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_child_neither_writes_nor_truncates_the_parents_file(tmp_path: Path) -> None:
    log = MappedLog(tmp_path / "x")
    log.append(b"parent 1\n")
    pid = os.fork()
    if pid == 0:  # child: what a DataLoader worker would hold
        try:
            log.append(b"child\n")
            code = 1
        except ValueError:
            code = 0
        log.close()  # must not cut the parent's file to the child's view of it
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    log.append(b"parent 2\n")
    log.close()
    assert (tmp_path / "x").read_bytes() == b"parent 1\nparent 2\n"


def test_a_full_disk_is_an_error_at_open_not_a_sigbus_later(tmp_path: Path) -> None:
    # RLIMIT_FSIZE stands in for a full disk: reserving the next chunk fails with EFBIG
    done = _run(
        f"""
        import resource, signal
        from pathlib import Path
        from trainer_lab.mapped_log import MappedLog
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        try:
            MappedLog(Path({str(tmp_path)!r}) / "x")
        except OSError as error:
            print("refused:", error.errno)
        """
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().startswith("refused:")

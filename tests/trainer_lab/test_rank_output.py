"""A lab's live log shows what rank 0 prints while the launch runs (issue 26: the panel showed
only the launcher's own lines until the run ended). The test waits on the line itself, never
on a sleep: rank 0 prints, then blocks until the test has seen that line and releases it."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import pytest

from trainer_lab.launcher import LaunchResult, launch
from trainer_lab.rank_output import RankOutputTail

TASK = "trainer_lab.train.selftest_live:log_then_wait"


@pytest.mark.lab
def test_a_rank_line_reaches_the_caller_before_the_launch_ends(tmp_path: Path) -> None:
    release = tmp_path / "release"
    lines: queue.Queue[str] = queue.Queue()
    done: list[LaunchResult] = []
    run = threading.Thread(
        target=lambda: done.append(
            launch(TASK, {"release": str(release)}, tmp_path / "run", 2, timeout_s=90,
                   on_output=lines.put)
        )
    )  # fmt: skip
    run.start()
    try:
        first = lines.get(timeout=80)  # the launch is blocked until we release it
        assert first == "[rank 0] before the release"
        assert run.is_alive() and not done
    finally:
        release.touch()
        run.join(timeout=90)
    assert done and done[0].status == "ok", done and done[0].root_cause
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert rest == ["[rank 0] after the release"]  # each line once, the last one too


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        handle.write(text)


def test_tail_hands_whole_lines_once_across_attempts(tmp_path: Path) -> None:
    tail = RankOutputTail(tmp_path)
    first = tmp_path / "job" / "attempt_0" / "0" / "stdout.log"
    _write(first, "one\ntw")
    _write(tmp_path / "job" / "attempt_0" / "1" / "stdout.log", "rank one\n")  # not rank 0
    assert tail.poll() == ["one"]
    _write(first, "o\n")
    assert tail.poll() == ["two"]
    assert tail.poll() == []
    _write(tmp_path / "job" / "attempt_10" / "0" / "stdout.log", "ten\n")
    _write(tmp_path / "job" / "attempt_2" / "0" / "stdout.log", "restarted\n")
    assert tail.poll() == ["restarted", "ten"]  # attempts in their order, not by name


def test_tail_stops_at_its_limit_and_says_where_the_rest_is(tmp_path: Path) -> None:
    tail = RankOutputTail(tmp_path, limit=3)
    _write(tmp_path / "job" / "attempt_0" / "0" / "stdout.log", "a\nb\nc\nd\n")
    assert tail.poll() == ["a", "b", f"... more output in {tmp_path}"]
    _write(tmp_path / "job" / "attempt_0" / "0" / "stdout.log", "e\n")
    assert tail.poll() == []

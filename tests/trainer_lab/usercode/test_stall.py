"""The no-progress watchdog on an observe dir the test writes, under a clock it moves by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.clocks import FakeClock
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, _ProcessWatchdog, _root_cause
from trainer_lab.usercode.stall import STALL_S, STARTUP_S, WORKERS_S, Stall, StallWatch


class Ranks:
    """Appends records as the bootstrap does: one JSON line per step / fetch, per rank."""

    def __init__(self, observe: Path) -> None:
        self.dir = observe
        self.steps: dict[int, int] = {}

    def _append(self, name: str, record: dict[str, object]) -> None:
        with (self.dir / name).open("a") as f:
            f.write(json.dumps(record) + "\n")

    def fetch(self, rank: int, sample: int = 0) -> None:
        self._append(protocol.fetch_file(rank), {"pstep": self.steps.get(rank, 0), "id": sample})

    def workers(self, rank: int, event: str) -> None:
        self._append(protocol.workers_file(rank), {"event": event, "pstep": self.steps.get(rank)})

    def step(self, rank: int) -> None:
        self.steps[rank] = self.steps.get(rank, 0) + 1
        self._append(protocol.steps_file(rank), {"pstep": self.steps[rank], "post": {}})


@pytest.fixture
def observe(tmp_path: Path) -> Path:
    path = tmp_path / protocol.OBSERVE_DIR
    path.mkdir()
    return path


def test_a_run_recording_every_step_never_stalls(observe):
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 2, clock)
    clock.advance(STARTUP_S - 1)  # a slow start, then a step a second for a long time
    for _ in range(200):
        for rank in (0, 1):
            ranks.fetch(rank)
            ranks.step(rank)
        assert watch.poll() is None
        clock.advance(1.0)
    assert watch.poll() is None


def test_it_fires_stall_s_after_the_last_record_once_a_step_was_made(observe):
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 2, clock)
    clock.advance(5)
    for _ in range(4):
        for rank in (0, 1):
            ranks.step(rank)
        watch.poll()
        clock.advance(0.1)
    ranks.fetch(1)  # rank 1 fetched its next batch, then waits in the all-reduce
    assert watch.poll() is None
    clock.advance(STALL_S - 0.05)
    assert watch.poll() is None
    clock.advance(0.05)
    stall = watch.poll()
    assert stall == Stall(STALL_S, STALL_S, True, 2, {0: 4, 1: 4})
    assert stall.observed() == (
        "no rank made progress for 8 s (optimizer steps done: rank 0: 4, rank 1: 4)"
    )
    assert "at least every 8 s" in stall.expected()
    assert "a collective (all_reduce, barrier, ...) that not every rank calls" in (
        stall.likely_cause()
    )
    clock.advance(60)
    assert watch.poll() is None  # it fires once


def test_one_rank_making_progress_is_enough(observe):
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 2, clock)
    ranks.step(0)
    ranks.step(1)
    watch.poll()
    for _ in range(30):  # rank 0 waits (e.g. at a barrier) while rank 1 works through steps
        clock.advance(STALL_S / 2)
        ranks.step(1)
        assert watch.poll() is None


def test_fetches_before_the_first_step_get_the_start_up_allowance(observe):
    """A first step can be slow (torch.compile compiles it): until one is recorded, only
    STARTUP_S of quiet is a stall, counted from the last record."""
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 2, clock)
    clock.advance(10)
    ranks.fetch(0)
    ranks.fetch(1)
    assert watch.poll() is None
    clock.advance(STARTUP_S - 0.1)
    assert watch.poll() is None
    clock.advance(0.1)
    stall = watch.poll()
    assert stall is not None and not stall.started and stall.steps == {}
    assert stall.observed() == "no rank made progress for 45 s (no optimizer step yet)"
    assert stall.expected() == "expected the first optimizer step within 45 s"
    assert stall.likely_cause().endswith(", before the first step")


def test_nothing_at_all_fires_after_the_start_up_allowance(observe):
    clock = FakeClock()
    watch = StallWatch(observe, 0, clock)
    clock.advance(STARTUP_S - 0.1)
    assert watch.poll() is None
    clock.advance(0.1)
    stall = watch.poll()
    assert stall is not None and not stall.started
    assert "an endless loop" in stall.likely_cause()  # one process: no collective to blame


def test_stack_dumps_and_pid_files_are_not_progress(observe):
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 1, clock)
    ranks.step(0)
    watch.poll()
    clock.advance(STALL_S - 1)
    (observe / protocol.stack_file(0, 123)).write_text("Thread 0x1 (most recent call first):\n")
    (observe / protocol.pid_file(0, 123)).write_text("123")
    (observe / protocol.crash_file(0, 123)).write_text("")
    assert watch.poll() is None
    clock.advance(1)
    assert watch.poll() is not None


@pytest.mark.parametrize("event", ["start", "stop"])
def test_a_rank_starting_or_stopping_loader_workers_is_working_not_stalled(observe, event):
    """Spawned DataLoader workers import torch again as they start; torch joins each stopping
    worker for up to 5 s: WORKERS_S of quiet, not STALL_S, while a rank is inside either."""
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 2, clock)
    for rank in (0, 1):
        ranks.step(rank)
    watch.poll()
    ranks.workers(0, event)  # rank 0's main() returned: its loader shuts its workers down
    assert watch.poll() is None
    clock.advance(STALL_S + 5)
    assert watch.poll() is None
    clock.advance(WORKERS_S - STALL_S - 5 - 0.05)
    assert watch.poll() is None
    clock.advance(0.05)
    stall = watch.poll()  # bounded: a rank that never leaves it is stopped all the same
    assert stall is not None and stall.quiet_s == WORKERS_S


@pytest.mark.parametrize("done", ["ready", "stopped"])
def test_workers_that_started_or_stopped_leave_the_stall_limit_as_it_was(observe, done):
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 2, clock)
    for rank in (0, 1):
        ranks.step(rank)
    ranks.workers(1, "start" if done == "ready" else "stop")
    ranks.workers(1, done)
    watch.poll()
    clock.advance(STALL_S)
    stall = watch.poll()
    assert stall is not None and stall.quiet_s == STALL_S


def test_an_unreadable_workers_record_is_not_a_reason_to_wait(observe):
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 1, clock)
    ranks.step(0)
    (observe / protocol.workers_file(0)).write_bytes(b'{"event": "sto\xff')
    watch.poll()
    clock.advance(STALL_S)
    assert watch.poll() is not None


def test_thresholds_can_be_set_per_watch(observe):
    clock, ranks = FakeClock(), Ranks(observe)
    watch = StallWatch(observe, 2, clock, stall_s=2.0, startup_s=5.0)
    ranks.step(0)
    watch.poll()
    clock.advance(2.0)
    stall = watch.poll()
    assert stall is not None and stall.limit_s == 2.0
    assert "at least every 2 s" in stall.expected()


NO_SESSION = 2**31 - 1  # above any pid: no process belongs to it


def launch(tmp_path: Path, world_size: int = 2, watch: bool = True) -> ScriptLaunch:
    return ScriptLaunch(
        "w2",
        tmp_path / "ws" / "train.py",
        (),
        world_size,
        tmp_path / "run",
        tmp_path / "ckpt",
        90.0,
        watch_progress=watch,
    )


def test_the_process_watchdog_stops_a_stalled_launch(tmp_path):
    """The harness's poll: a stall stops the launch (the stacks are asked for first; no rank
    wrote a pid file here, so none is signalled)."""
    observe = tmp_path / "run" / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    clock = FakeClock()
    watchdog = _ProcessWatchdog(NO_SESSION, None, launch(tmp_path))
    watchdog.stall_watch = StallWatch(observe, 2, clock)
    Ranks(observe).step(0)
    watchdog.poll()
    assert not watchdog.stop.is_set()
    clock.advance(STALL_S)
    watchdog.poll()
    assert watchdog.stop.is_set() and watchdog.stalled is not None
    assert not watchdog.over_limit


def test_launches_that_do_not_ask_for_it_have_no_stall_watch(tmp_path):
    assert _ProcessWatchdog(NO_SESSION, None, launch(tmp_path, watch=False)).stall_watch is None


def test_a_stalled_run_says_what_it_saw_where_each_rank_was_and_why(tmp_path):
    stall = Stall(8.0, 8.0, True, 2, {0: 4, 1: 4})
    run = ScriptRun(launch(tmp_path), "timeout", -9, 13.2, stall=stall)
    run.hangs = {
        0: "in barrier (a collective) called at train.py:80",
        1: "in all_reduce (a collective) called at train.py:134",
    }
    assert run.summary() == (
        "hang: no rank made progress for 8 s (optimizer steps done: rank 0: 4, rank 1: 4), "
        "killed after 13 s (rank 0: in barrier (a collective) called at train.py:80; rank 1: in "
        "all_reduce (a collective) called at train.py:134); expected an optimizer step, a "
        "dataset fetch or a checkpoint write on some rank at least every 8 s (a step takes well "
        "under a second); probably the ranks wait for each other: a collective "
        "(all_reduce, barrier, ...) that not every rank calls, or calls in another order"
    )
    assert "likely cause: " not in run.summary()  # graders embed it mid-detail
    assert run.to_dict()["summary"] == run.summary()
    run.root_cause = _root_cause(run)
    assert run.root_cause.kind == "hang"
    assert run.root_cause.message == stall.text()
    assert stall.text().endswith(
        "; likely cause: the ranks wait for each other: a collective (all_reduce, barrier, ...) "
        "that not every rank calls, or calls in another order"
    )

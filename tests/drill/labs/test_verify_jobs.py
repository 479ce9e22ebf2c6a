"""`drill verify --jobs`: the core budget, longest first, failures, cancel, stable output order.

The fakes record start/finish events; a fake run holds until the scheduler has started as many
runs as the budget allows (a Condition, not a sleep), so a scheduler that ignores the budget or
runs serially shows up in the recorded concurrency.
"""

import threading
from pathlib import Path
from typing import Any

import pytest

from drill.decks.models import Card
from drill.labs.schedule import Planned, run_scheduled
from drill.labs.verify import LabJob, LinkedCard, ResultCache, run_verify
from tests.support.run_log import cache_db
from trainer_lab.result import LabResult, new_result


def linked(card_id: str, lab: dict[str, Any]) -> LinkedCard:
    data = {"id": card_id, "level": "easy", "front": "q", "back": "a", "lab": lab}
    return LinkedCard("deck", Card.model_validate(data))


def ok(**observations: Any) -> LabResult:
    made = new_result("lab", {}, 2, Path("run"))
    made["status"], made["observations"] = "ok", observations
    return made


class Recorder:
    """Start/finish events; cores in use over time computed from them."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.events: list[tuple[str, str, int]] = []
        self.running = 0
        self.started = 0
        self.live: set[str] = set()
        self.overlapped: set[str] = set()  # runs that have shared the machine with another

    def start(self, name: str, cores: int) -> None:
        with self.lock:
            self.events.append(("start", name, cores))
            self.running += 1
            self.started += 1
            self.live.add(name)
            if len(self.live) >= 2:
                self.overlapped |= self.live
            self.lock.notify_all()

    def finish(self, name: str, cores: int) -> None:
        with self.lock:
            self.events.append(("finish", name, cores))
            self.running -= 1
            self.live.discard(name)
            self.lock.notify_all()

    def hold_until(self, predicate: Any) -> bool:
        with self.lock:
            return self.lock.wait_for(predicate, timeout=10)

    def peak_cores(self) -> int:
        in_use = peak = 0
        for kind, _, cores in self.events:
            in_use += cores if kind == "start" else -cores
            peak = max(peak, in_use)
        return peak

    def order(self) -> list[str]:
        return [name for kind, name, _ in self.events if kind == "start"]


def test_concurrent_runs_fill_but_never_exceed_the_core_budget() -> None:
    rec = Recorder()
    planned = [Planned(f"j{i}", 2, 10.0) for i in range(6)]

    def run(name: str, cancel: threading.Event) -> str:
        rec.start(name, 2)
        # hold until two runs overlap (the budget fits two) or every run has started
        filled = rec.hold_until(lambda: name in rec.overlapped or rec.started == len(planned))
        rec.finish(name, 2)
        return "ok" if filled else "starved"

    # the scheduler's own view: started runs minus collected ones, from its callbacks
    claimed = Recorder()
    done = run_scheduled(
        planned,
        run,
        4,
        on_error=lambda item, exc: "error",
        on_start=lambda name: claimed.start(name, 2),
        on_finish=lambda name, outcome: claimed.finish(name, 2),
    )
    assert sorted(item for item, _ in done) == [f"j{i}" for i in range(6)]
    assert all(outcome == "ok" for _, outcome in done)
    assert rec.peak_cores() == 4
    assert claimed.peak_cores() == 4


def test_a_run_larger_than_the_budget_runs_alone() -> None:
    rec = Recorder()
    planned = [Planned("small-a", 1, 5.0), Planned("big", 4, 1.0), Planned("small-b", 1, 5.0)]
    cores = {p.item: p.cores for p in planned}
    overlaps: list[tuple[str, int]] = []

    def run(name: str, cancel: threading.Event) -> str:
        rec.start(name, cores[name])
        with rec.lock:
            overlaps.append((name, rec.running))
        rec.hold_until(lambda: name in rec.overlapped or rec.started == len(planned))
        rec.finish(name, cores[name])
        return "ok"

    claimed = Recorder()
    run_scheduled(
        planned,
        run,
        2,
        on_error=lambda item, exc: "error",
        on_start=lambda name: claimed.start(name, cores[name]),
        on_finish=lambda name, outcome: claimed.finish(name, cores[name]),
    )
    assert dict(overlaps)["big"] == 1
    assert claimed.peak_cores() == 4  # only while big runs alone
    big_at = claimed.events.index(("start", "big", 4))
    assert claimed.events[big_at - 1][0] == "finish" and claimed.events[big_at + 1][0] == "finish"
    assert rec.order()[-1] == "big"  # shortest estimate: last


def test_longest_estimate_starts_first() -> None:
    rec = Recorder()
    planned = [Planned("short", 1, 1.0), Planned("long", 1, 50.0), Planned("mid", 1, 9.0)]

    def run(name: str, cancel: threading.Event) -> str:
        rec.start(name, 1)
        rec.finish(name, 1)
        return name

    run_scheduled(planned, run, 1, on_error=lambda item, exc: "error")
    assert rec.order() == ["long", "mid", "short"]
    assert rec.peak_cores() == 1


def test_a_failing_run_does_not_stop_the_others() -> None:
    def run(name: str, cancel: threading.Event) -> str:
        if name == "bad":
            raise RuntimeError("boom")
        return "ok"

    planned = [Planned(n, 1, 1.0) for n in ("a", "bad", "b", "c")]
    done = dict(run_scheduled(planned, run, 2, on_error=lambda item, exc: f"error: {exc}"))
    assert done == {"a": "ok", "bad": "error: boom", "b": "ok", "c": "ok"}


def test_ctrl_c_cancels_every_running_run_and_starts_no_more() -> None:
    rec = Recorder()
    saw_cancel: dict[str, bool] = {}
    planned = [Planned(f"j{i}", 1, 10.0 - i) for i in range(5)]

    def run(name: str, cancel: threading.Event) -> str:
        rec.start(name, 1)
        saw_cancel[name] = cancel.wait(timeout=10)  # a real runner kills its processes here
        rec.finish(name, 1)
        return "cancelled"

    def on_start(name: str) -> None:
        if name == "j1":  # both cores busy: the user presses Ctrl-C
            rec.hold_until(lambda: rec.started == 2)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_scheduled(planned, run, 2, on_error=lambda item, exc: "error", on_start=on_start)
    assert saw_cancel == {"j0": True, "j1": True}
    assert rec.running == 0  # every started run finished before run_scheduled returned
    assert rec.order() == ["j0", "j1"]


def test_verify_output_order_does_not_follow_completion_order(tmp_path: Path) -> None:
    cards = [
        linked("first", {"run": "lab-a", "expect": ["x == 1"]}),
        linked("second", {"run": "lab-b", "expect": ["x == 2"]}),
    ]
    b_done = threading.Event()
    finished: list[str] = []

    def run_job(job: LabJob, out_dir: Path, progress: Any, cancel: Any) -> Any:
        if job.lab == "lab-a":
            assert b_done.wait(timeout=10), "lab-b never ran alongside lab-a"
        finished.append(job.lab)
        if job.lab == "lab-b":
            b_done.set()
        return ok(x=1 if job.lab == "lab-a" else 2)

    cache = ResultCache(cache_db(tmp_path / "cache"), "v")
    report = run_verify(cards, run_job, cache, tmp_path / "runs", budget=2, cores_of=lambda j: 1)
    assert finished == ["lab-b", "lab-a"]
    assert [row.card_id for row in report.rows] == ["first", "second"]
    assert [o.job.lab for o in report.jobs] == ["lab-a", "lab-b"]
    assert report.ok


def test_cached_durations_order_the_next_cold_run(tmp_path: Path) -> None:
    cards = [linked(c, {"run": f"lab-{c}", "expect": ["x == 1"]}) for c in ("a", "b", "c")]
    cache = ResultCache(cache_db(tmp_path), "v1")
    for lab, seconds in (("lab-a", 2.0), ("lab-b", 30.0), ("lab-c", 7.0)):
        cache.put(LabJob(lab, (), None), ok(x=1), tmp_path / lab, seconds)
    started: list[str] = []
    new_version = ResultCache(cache_db(tmp_path), "v2")  # results stale, durations kept
    assert new_version.duration(LabJob("lab-b", (), None)) == 30.0
    run_verify(
        cards,
        lambda job, out, progress, cancel: ok(x=1),
        new_version,
        tmp_path / "runs",
        budget=1,
        cores_of=lambda j: 1,
        on_start=lambda job, estimate: started.append(job.lab),
    )
    assert started == ["lab-b", "lab-c", "lab-a"]
    assert new_version.duration(LabJob("lab-d", (), None)) is None  # never ran: no estimate


def test_a_run_that_raises_reads_as_a_lab_error(tmp_path: Path) -> None:
    cards = [
        linked("a", {"run": "lab-a", "expect": ["x == 1"]}),
        linked("b", {"run": "lab-b", "expect": ["x == 1"]}),
    ]

    def run_job(job: LabJob, out_dir: Path, progress: Any, cancel: Any) -> Any:
        if job.lab == "lab-a":
            raise OSError("no such file")
        return ok(x=1)

    report = run_verify(
        cards, run_job, ResultCache(cache_db(tmp_path / "c"), "v"), tmp_path / "r", budget=2
    )
    assert [(r.card_id, r.passed) for r in report.rows] == [("a", False), ("b", True)]
    assert "no such file" in report.rows[0].detail


def test_durations_from_concurrent_runs_are_all_kept(tmp_path: Path) -> None:
    cache = ResultCache(cache_db(tmp_path), "v")
    jobs = [LabJob(f"lab-{i}", (), None) for i in range(16)]
    threads = [
        threading.Thread(target=cache.put, args=(job, ok(x=1), tmp_path / job.lab, float(i)))
        for i, job in enumerate(jobs)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [cache.duration(job) for job in jobs] == [float(i) for i in range(16)]


def test_an_unwritable_cache_never_spoils_a_result(tmp_path: Path) -> None:
    db = cache_db(tmp_path)
    db.path.write_bytes(b"not a database" * 1000)  # writes and reads now fail
    cards = [linked("a", {"run": "lab-a", "expect": ["x == 1"]})]
    report = run_verify(
        cards, lambda job, out, progress, cancel: ok(x=1), ResultCache(db, "v"), tmp_path
    )
    assert report.ok and report.rows[0].passed

import multiprocessing
import threading
from datetime import datetime
from pathlib import Path

from drill.paths import new_numbered_dir, new_run_dir

WHEN = datetime(2026, 3, 10, 12, 0, 5)
RACERS = 16


def test_new_run_dir_creates_a_directory_no_run_has_used(tmp_path: Path) -> None:
    first = new_run_dir(tmp_path, "resume", WHEN)
    assert first == tmp_path / "resume-20260310-120005"
    assert first.is_dir()
    second = new_run_dir(tmp_path, "resume", WHEN)
    assert second == tmp_path / "resume-20260310-120005-2"
    assert new_run_dir(tmp_path, "resume", WHEN).name == "resume-20260310-120005-3"


def test_a_directory_already_there_is_never_reused(tmp_path: Path) -> None:
    taken = tmp_path / "runs" / "resume-20260310-120005"
    taken.mkdir(parents=True)
    (taken / "events-rank0.jsonl").write_text("{}\n")
    (tmp_path / "runs" / "resume-20260310-120005-2").write_text("a file, not a run")
    made = new_run_dir(tmp_path / "runs", "resume", WHEN)
    assert made.name == "resume-20260310-120005-3"
    assert list(made.iterdir()) == []


def _race(target, args_for, count: int) -> list[Path]:
    """Start `count` threads that wait at one barrier, then each call target(*args)."""
    barrier = threading.Barrier(count)
    found: list[Path] = []
    lock = threading.Lock()

    def run(args) -> None:
        barrier.wait()
        made = target(*args)
        with lock:
            found.append(made)

    threads = [threading.Thread(target=run, args=(args_for(i),)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found


def test_threads_started_in_the_same_second_get_their_own_run_dirs(tmp_path: Path) -> None:
    made = _race(new_run_dir, lambda _i: (tmp_path, "grading", WHEN), RACERS)
    assert len(set(made)) == RACERS
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in made)


def _claim_in_process(root: str, start, out) -> None:
    start.wait()
    out.put(str(new_run_dir(Path(root), "verify", WHEN)))


def test_processes_started_in_the_same_second_get_their_own_run_dirs(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start, out = context.Event(), context.Queue()
    workers = [
        context.Process(target=_claim_in_process, args=(str(tmp_path), start, out))
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    start.set()
    made = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert len(set(made)) == len(workers)


def test_numbered_dirs_follow_the_highest_number_and_are_never_shared(tmp_path: Path) -> None:
    grades = tmp_path / "grades"
    (grades / "7").mkdir(parents=True)
    assert new_numbered_dir(grades) == grades / "8"
    made = _race(new_numbered_dir, lambda _i: (grades,), RACERS)
    assert sorted(int(p.name) for p in made) == list(range(9, 9 + RACERS))

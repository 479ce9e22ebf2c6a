import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path

from drill.paths import new_numbered_dir, new_run_dir
from tests.support.paths import REPO

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


CLAIM_IN_A_PROCESS = (
    "import sys; from datetime import datetime; from pathlib import Path;"
    "from drill.paths import new_run_dir; sys.stdin.readline();"
    "print(new_run_dir(Path(sys.argv[1]), 'verify', datetime(2026, 3, 10, 12, 0, 5)))"
)


def test_processes_started_in_the_same_second_get_their_own_run_dirs(tmp_path: Path) -> None:
    # plain subprocesses (multiprocessing would leave its resource tracker running under the
    # test process); each waits on its stdin, so all claim once the last one has started
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", CLAIM_IN_A_PROCESS, str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for _ in range(4)
    ]
    for worker in workers:  # every process is started before any is told to claim
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    outputs = [worker.communicate(timeout=120)[0] for worker in workers]
    made = [line.strip() for line in outputs]
    assert all(worker.returncode == 0 for worker in workers)
    assert len(set(made)) == len(workers)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(m).name for m in made)


def test_numbered_dirs_follow_the_highest_number_and_are_never_shared(tmp_path: Path) -> None:
    grades = tmp_path / "grades"
    (grades / "7").mkdir(parents=True)
    assert new_numbered_dir(grades) == grades / "8"
    made = _race(new_numbered_dir, lambda _i: (grades,), RACERS)
    assert sorted(int(p.name) for p in made) == list(range(9, 9 + RACERS))

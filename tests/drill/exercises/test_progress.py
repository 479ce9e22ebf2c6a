"""Exercise checks are stored from the lab-result contract: a result.json read back through
trainer_lab.result (defaults filled for what an older writer left out) becomes one run-log row of
kind "exercise", and counts in the exercise's progress."""

from __future__ import annotations

import json
from pathlib import Path

from drill.exercises.progress import ProgressStore
from drill.runs.recorder import RunRecorder
from storage.db import open_database
from trainer_lab.result import RESULT_FILE, LabResult, new_result, read_result, write_result


def _record(store: ProgressStore, name: str, result: LabResult, run_dir: Path) -> None:
    recorder = RunRecorder("exercise", db=store.db)
    recorder.start(name, {}, 2, run_dir)
    assert recorder.finish_result(result) is None
    store.record_check(name, result)


def test_a_result_read_from_its_run_dir_is_stored_as_an_attempt(tmp_path: Path) -> None:
    store = ProgressStore(open_database(tmp_path / "db.sqlite3"))
    run_dir = tmp_path / "checks" / "1"
    failed = new_result("exercise:ddp-by-hand", {}, 2, run_dir)
    failed["status"] = "failed"
    failed["duration_s"] = 2.5
    failed["checks"] = [
        {"name": "params_in_sync", "passed": True, "detail": ""},
        {"name": "grads_averaged", "passed": False, "detail": "rank 1 differs"},
    ]
    write_result(run_dir, failed)
    result = read_result(run_dir)
    assert result is not None
    assert store.get("ddp-by-hand").status == "not started"
    _record(store, "ddp-by-hand", result, run_dir)
    [attempt] = store.attempts("ddp-by-hand")
    assert (attempt.kind, attempt.status, attempt.summary["checks_passed"]) == (
        "exercise", "failed", 1
    )  # fmt: skip
    assert attempt.summary["checks_total"] == 2
    assert attempt.summary["failed_checks"] == ["grads_averaged"]
    assert (attempt.duration_s, attempt.run_dir) == (2.5, run_dir)
    assert store.get("ddp-by-hand").status == "failing"


def test_fields_an_older_result_left_out_are_stored_as_the_contract_defaults(
    tmp_path: Path,
) -> None:
    store = ProgressStore(open_database(tmp_path / "db.sqlite3"))
    run_dir = tmp_path / "checks" / "1"
    run_dir.mkdir(parents=True)
    (run_dir / RESULT_FILE).write_text(json.dumps({"lab": "exercise:x", "status": "ok"}))
    result = read_result(run_dir)
    assert result is not None
    _record(store, "x", result, run_dir)
    [attempt] = store.attempts("x")
    assert (attempt.summary["checks_total"], attempt.status) == (0, "ok")
    assert attempt.duration_s is not None  # 0.0 in the result: the measured time instead
    assert store.get("x").status == "solved"


def test_a_cancelled_check_is_logged_but_not_counted(tmp_path: Path) -> None:
    store = ProgressStore(open_database(tmp_path / "db.sqlite3"))
    recorder = RunRecorder("exercise", db=store.db)
    recorder.start("x", {}, 2, tmp_path)
    recorder.close()
    assert store.attempts("x") == [] and store.get("x").status == "not started"
    [row] = store.db.runs.find(kinds=["exercise"])
    assert row.status == "cancelled"

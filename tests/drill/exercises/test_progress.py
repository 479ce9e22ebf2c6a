"""Exercise attempts are stored from the lab-result contract: a result.json read back through
trainer_lab.result (defaults filled for what an older writer left out) becomes one attempt row."""

from __future__ import annotations

import json
from pathlib import Path

from drill.exercises.progress import ProgressStore
from storage.db import open_database
from trainer_lab.result import RESULT_FILE, new_result, read_result, write_result


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
    before = store.record_attempt("ddp-by-hand", result)
    assert before.status == "not started"
    [attempt] = store.attempts("ddp-by-hand")
    assert (attempt["status"], attempt["passed"], attempt["total"]) == ("failed", 1, 2)
    assert json.loads(attempt["failed_json"]) == ["grads_averaged"]
    assert (attempt["duration_s"], attempt["run_dir"]) == (2.5, str(run_dir))
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
    store.record_attempt("x", result)
    [attempt] = store.attempts("x")
    assert (attempt["duration_s"], attempt["run_dir"], attempt["total"]) == (0.0, "", 0)
    assert store.get("x").status == "solved"

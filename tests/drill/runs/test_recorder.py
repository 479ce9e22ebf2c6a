"""RunRecorder (drill.runs.recorder), the one recorder: `drill lab run` records its run in the
run log through the result contract; a log that cannot be written costs a notice line, never the
run; a run that ends without a result is closed as cancelled."""

from __future__ import annotations

from pathlib import Path

from drill.database import Database, open_app_database
from drill.labs.runs import LabRuns
from drill.runs.log import RunLog
from drill.runs.recorder import RunRecorder
from storage.errors import DatabaseError
from trainer_lab.result import ended_result, new_result


def test_a_finished_run_is_recorded_with_its_checks_and_duration(tmp_path: Path) -> None:
    notices: list[str] = []
    recorder = RunRecorder("lab", notify=notices.append)
    recorder.start("resume", {"steps": 10}, 2, tmp_path / "run")
    result = new_result("resume", {"steps": 10}, 2, tmp_path / "run")
    result["status"] = "failed"
    result["duration_s"] = 4.25
    result["checks"] = [
        {"name": "losses_match", "passed": True, "detail": ""},
        {"name": "resume_exact", "passed": False, "detail": "step 6 differs"},
    ]
    recorder.finish_result(result)
    recorder.close()
    db = open_app_database()
    (run,) = LabRuns(db).runs(lab="resume")
    db.close()
    assert (run.kind, run.status, run.duration_s, run.world_size) == ("lab", "failed", 4.25, 2)
    assert run.summary["checks_passed"] == 1 and run.summary["failed_checks"] == ["resume_exact"]
    assert run.finished_at is not None
    assert notices == []


def test_a_result_without_a_duration_takes_the_measured_one(tmp_path: Path) -> None:
    recorder = RunRecorder("lab")
    recorder.start("resume", {}, 2, tmp_path / "run")
    recorder.finish_result(ended_result("resume", {}, 2, tmp_path, "cancelled", "cancelled", 0.0))
    recorder.close()
    db = open_app_database()
    (run,) = LabRuns(db).runs(lab="resume")
    db.close()
    assert run.status == "cancelled" and run.duration_s is not None and run.duration_s > 0


def test_a_run_that_ends_without_a_result_is_closed_as_cancelled(tmp_path: Path) -> None:
    recorder = RunRecorder("coding")
    recorder.start("mock-coding", {}, 2, tmp_path / "run")
    recorder.close()
    db = open_app_database()
    (run,) = RunLog(db).runs(kinds=["coding"])
    db.close()
    assert run.status == "cancelled" and "stopped" in run.summary["error"]


def test_a_database_that_cannot_be_opened_costs_one_notice(tmp_path: Path) -> None:
    notices: list[str] = []

    def broken() -> Database:
        raise DatabaseError("cannot open the database: file is not a database")

    recorder = RunRecorder("lab", notify=notices.append, open_db=broken)
    assert recorder.start("resume", {}, 2, tmp_path / "run") is not None
    assert recorder.finish_result(new_result("resume", {}, 2, tmp_path / "run")) is None
    recorder.close()
    assert notices == [
        "this run is not recorded in the lab history: "
        "cannot open the database: file is not a database"
    ]

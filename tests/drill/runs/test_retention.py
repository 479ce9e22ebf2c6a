"""Run folders are kept for a while, not forever (issue 32, smaller items): the newest N of each
kind stay, and so does every folder in use (a `running` row's, the newest result of a lab and
its params, one changed in the last hour); `drill runs prune` and the pruning after each run."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.database import open_app_database
from drill.runs import retention
from drill.runs.recorder import RunRecorder

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
OLD = time.time() - 2 * 24 * 3600  # two days ago: not a run in progress


@pytest.fixture(autouse=True)
def keep_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """main() configures keep_runs for the process: put it back after each test."""
    monkeypatch.setattr(retention, "_keep", retention.kept_per_kind())


def _run(root: Path, name: str, second: int, size: int = 100, *, old: bool = True) -> Path:
    folder = root / f"{name}-20260301-1200{second:02d}"
    (folder / "runs").mkdir(parents=True)
    (folder / "runs" / "events-rank0.jsonl").write_bytes(b"x" * size)
    (folder / "result.json").write_text("{}")
    if old:
        for path in (folder / "runs", folder):
            os.utime(path, (OLD, OLD))
    return folder


def _home(home: Path) -> dict[str, list[Path]]:
    runs = home / "runs"
    return {
        "lab": [_run(runs, "resume", s) for s in range(5)],
        "other": [_run(runs, "sampler", s) for s in range(2)],
        "verify": [_run(runs / "verify", "resume-abc123", s) for s in range(3)],
        "checks": [_run(home / "exercises" / "ddp" / "checks", "check", s) for s in range(4)],
    }


def test_prune_keeps_the_newest_of_each_kind_and_every_folder_in_use(drill_home: Path) -> None:
    made = _home(drill_home)
    grading = drill_home / "rounds" / "1" / "grades" / "1"  # a round's: never a kind
    grading.mkdir(parents=True)
    running, newest_result = made["lab"][0], made["checks"][0]
    recent = _run(drill_home / "runs", "resume", 59, old=False)  # made its folder just now
    pruned = retention.prune(retention.run_roots(drill_home), 2, [str(running), str(newest_result)])
    removed = sorted(path for path, _ in pruned.removed)
    assert removed == sorted([*made["lab"][1:4], made["verify"][0], *made["checks"][1:2]])
    assert all(size == 102 for _, size in pruned.removed)  # 100 + the 2-byte result.json
    assert pruned.bytes_freed == 102 * len(removed)
    assert not any(path.exists() for path in removed)
    for kept in (running, newest_result, recent, made["lab"][4], *made["other"], grading):
        assert kept.is_dir()


def test_dry_run_removes_nothing_and_the_command_says_what_it_frees(
    drill_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _home(drill_home)
    assert main(["runs", "prune", "--keep", "3", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"would remove {made['lab'][0]} (102 bytes)"
    assert out[-1].startswith("3 run folder(s) would be removed, 306 bytes would be freed; ")
    assert all(path.is_dir() for paths in made.values() for path in paths)
    assert main(["runs", "prune", "--keep", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("3 run folder(s) removed, 306 bytes freed; ")
    assert not made["lab"][0].exists() and not made["checks"][0].exists()
    assert made["lab"][2].is_dir()


def test_the_newest_result_of_a_lab_in_the_run_log_is_kept(
    drill_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _home(drill_home)
    db = open_app_database()
    for folder, params in ((made["lab"][0], {"steps": 9}), (made["lab"][1], {"steps": 4})):
        recorder = RunRecorder("lab", db=db)
        recorder.start("resume", params, 2, folder, NOW)
        recorder.finish("ok", {})  # the only run with these params: its result stays readable
    still = RunRecorder("lab", db=db)
    still.start("resume", {}, 2, made["lab"][2], NOW)  # running
    db.close()
    assert main(["runs", "prune", "--keep", "1"]) == 0
    assert [p.is_dir() for p in made["lab"]] == [True, True, True, False, True]


def test_keep_must_be_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["runs", "prune", "--keep", "0"])
    assert exited.value.code == 2
    assert "keep at least 1 run of each kind" in capsys.readouterr().err


def test_after_a_run_its_kind_is_pruned_to_keep_runs(drill_home: Path) -> None:
    made = _home(drill_home)
    (drill_home / "settings.toml").write_text("keep_runs = 2\n")
    assert main(["runs", "prune", "--dry-run"]) == 0  # main() reads keep_runs from settings
    assert retention.kept_per_kind() == 2
    db = open_app_database()
    try:
        recorder = RunRecorder("exercise", db=db)
        recorder.start("ddp", {}, 2, made["checks"][3], NOW)
        recorder.finish("ok", {})
    finally:
        db.close()
    assert [p.is_dir() for p in made["checks"]] == [False, False, True, True]
    assert all(p.is_dir() for p in made["lab"])  # another kind: pruned by its own runs


def test_keep_runs_zero_keeps_every_run(drill_home: Path) -> None:
    made = _home(drill_home)
    (drill_home / "settings.toml").write_text("keep_runs = 0\n")
    assert main(["runs", "prune"]) == 0
    db = open_app_database()
    try:
        recorder = RunRecorder("exercise", db=db)
        recorder.start("ddp", {}, 2, made["checks"][3], NOW)
        recorder.finish("ok", {})
    finally:
        db.close()
    assert all(p.is_dir() for paths in made.values() for p in paths)

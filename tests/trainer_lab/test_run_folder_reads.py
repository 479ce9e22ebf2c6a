"""Every reader of a run folder returns promptly, with a clear verdict, when user code planted a
FIFO, a symlink to /dev/zero or to a FIFO, a directory or a huge sparse file in place of each file
it reads (issue 32, item 6). The readers run in a subprocess (tests.support.run_folder_reads) so
that one that blocks fails the test instead of hanging the suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.hostile_files import HOSTILE_KINDS, plant, python_module, run_bounded
from tests.support.run_folder_reads import RUN_FILES, write_run_folder
from trainer_lab.events import trim_run_events
from trainer_lab.result import events_file


def read_everything(run_dir: Path) -> dict:
    done = run_bounded(python_module("tests.support.run_folder_reads", str(run_dir)))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) < 4 * 1024**2  # what came back is bounded too
    return json.loads(done.stdout)


NOTHING_FOUND = {
    "read_result": False,
    "read_run_events": {"0": []},
    "read_failures": [],
    "find_root_cause": "launcher: torchrun failed: no output",
    "rank_reports": None,
    "torchrun_exit_codes": {},
    "torchrun_root_cause_rank": None,
    "step_records": 0,
    "fetches": [],
    "optimizer_records": [],
    "save_events": 0,
    "probes": [],
    "step_lines": [],
    "hang_summary": {},
    "crash_dumps": [],
    "script_ended": None,
    "teardown_dumps": 0,
    "rank_output": [],
    "step_tail": [False, None],
    "trim_run_events": None,
}


def test_in_a_regular_run_folder_every_reader_finds_its_file(tmp_path: Path) -> None:
    write_run_folder(tmp_path)
    found = read_everything(tmp_path)
    assert {name: found[name] for name in NOTHING_FOUND if found[name] == NOTHING_FOUND[name]} == {
        "trim_run_events": None  # returns nothing either way
    }
    assert found["merge_checks_errors"] == []
    assert found["load_result_file"] == "lab"


@pytest.mark.parametrize("kind", [k for k in HOSTILE_KINDS if k != "sparse-huge"])
def test_a_planted_file_that_is_not_regular_is_refused_promptly_and_said(
    tmp_path: Path, kind: str
) -> None:
    write_run_folder(tmp_path)
    for name in RUN_FILES:
        plant(tmp_path / name, kind)
    found = read_everything(tmp_path)
    assert {name: found[name] for name in NOTHING_FOUND} == NOTHING_FOUND
    what = {"directory": "a directory", "fifo": "a FIFO"}.get(kind, "a symbolic link")
    checks = tmp_path / "exercise-rank0.jsonl"
    assert found["merge_checks_errors"] == [f"rank 0: {checks} is {what}, not a regular file"]
    result = tmp_path / "result.json"
    assert found["load_result_file"] == f"raised ResultFormatError: {result} is {what}, not a "\
        "regular file"  # fmt: skip
    if kind == "directory":  # a result is never written into a directory planted at its name
        assert found["driver_log"].startswith("raised IsADirectoryError")
    else:
        assert found["driver_log"]["message"].endswith("without a result: no output")


def test_huge_sparse_files_are_read_only_up_to_their_caps(tmp_path: Path) -> None:
    write_run_folder(tmp_path)
    for name in RUN_FILES:
        plant(tmp_path / name, "sparse-huge")
    found = read_everything(tmp_path)
    assert found["load_result_file"] == (
        f"raised ResultFormatError: {tmp_path / 'result.json'} is larger than 32 MiB"
    )
    empty = {"read_failures", "step_records", "fetches", "save_events", "probes", "step_lines",
             "hang_summary", "crash_dumps", "script_ended", "teardown_dumps", "torchrun_exit_codes",
             "merge_checks_errors", "read_run_events", "rank_reports"}  # fmt: skip
    assert {name: found[name] for name in empty} == {
        name: NOTHING_FOUND.get(name, []) for name in empty
    }
    assert len(found["find_root_cause"]) < 400  # a log line quoted is cut, not 4 MiB of NULs


def test_trimming_events_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"the user's data\0\0\0")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / events_file(0)).symlink_to(outside)
    trim_run_events(run_dir)
    assert outside.read_bytes() == b"the user's data\0\0\0"

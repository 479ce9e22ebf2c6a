"""The lab-result contract: round trip, atomic write, off-contract files refused."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from trainer_lab.result import (
    RESULT_FILE,
    ResultFormatError,
    ended_result,
    error_message,
    events_file,
    events_rank,
    failed_checks,
    load_result_file,
    new_result,
    parse_result,
    read_result,
    write_result,
)


def _full(tmp_path: Path) -> Any:
    result = new_result("resume", {"steps": 4}, 2, tmp_path)
    result["status"] = "failed"
    result["observations"] = {"modes": {"full": {"max_abs_diff": 0.0}}, "loss_jump_ratio": 7.1}
    result["checks"] = [
        {"name": "full_resume_identical", "passed": True, "detail": "0 diff"},
        {"name": "weights_only_jumps", "passed": False, "detail": "ratio 1.0"},
    ]
    result["error"] = {"message": "a check failed", "root_cause": None}
    return result


def test_round_trip(tmp_path: Path) -> None:
    result = _full(tmp_path)
    path = write_result(tmp_path, result)
    assert path == tmp_path / RESULT_FILE
    assert read_result(tmp_path) == result
    assert [c["name"] for c in failed_checks(result)] == ["weights_only_jumps"]
    assert error_message(result) == "a check failed"


def test_write_replaces_the_file_whole_and_leaves_no_temp_file(tmp_path: Path) -> None:
    first = _full(tmp_path)
    write_result(tmp_path, first)
    inode = os.stat(tmp_path / RESULT_FILE).st_ino
    second = ended_result("resume", {}, 2, tmp_path, "cancelled", "lab cancelled", 1.25)
    write_result(tmp_path, second)
    # a rename, not an in-place rewrite: a reader holding the old file never sees half of one
    assert os.stat(tmp_path / RESULT_FILE).st_ino != inode
    assert sorted(p.name for p in tmp_path.iterdir()) == [RESULT_FILE]
    loaded = read_result(tmp_path)
    assert loaded is not None
    assert (loaded["status"], error_message(loaded), loaded["duration_s"]) == (
        "cancelled",
        "lab cancelled",
        1.25,
    )


def test_optional_fields_get_their_defaults() -> None:
    result = parse_result({"lab": "x", "status": "ok", "checks": [{"name": "c", "passed": True}]})
    assert result["observations"] == {} and result["params"] == {} and result["env"] == {}
    assert result["checks"] == [{"name": "c", "passed": True, "detail": ""}]
    assert (result["world_size"], result["duration_s"], result["error"]) == (0, 0.0, None)
    assert parse_result({"lab": "x", "status": "ok", "duration_s": float("nan")})["duration_s"] == 0


def test_a_checks_facts_are_kept_and_anything_else_in_their_place_dropped() -> None:
    facts = {"killed_rank": 1, "causes": ["x"], "tears": [{"bytes": 3}]}
    checks = [
        {"name": "a", "passed": False, "detail": "d", "facts": facts},
        {"name": "b", "passed": True, "detail": "d", "facts": "rank 1"},
    ]
    result = parse_result({"lab": "x", "status": "ok", "checks": checks})
    assert result["checks"] == [
        {"name": "a", "passed": False, "detail": "d", "facts": facts},
        {"name": "b", "passed": True, "detail": "d"},
    ]


@pytest.mark.parametrize(
    "data",
    [
        [],
        "ok",
        {"status": "ok"},  # no lab
        {"lab": "x"},  # no status
        {"lab": "x", "status": "fine"},
        {"lab": "", "status": "ok"},
        {"lab": 3, "status": "ok"},
        {"lab": "x", "status": "ok", "observations": [1, 2]},
        {"lab": "x", "status": "ok", "params": "steps=4"},
        {"lab": "x", "status": "ok", "env": None},
        {"lab": "x", "status": "ok", "checks": {"name": "c"}},
        {"lab": "x", "status": "ok", "checks": [{"name": "c", "passed": "yes"}]},
        {"lab": "x", "status": "ok", "checks": [{"passed": True}]},
        {"lab": "x", "status": "ok", "error": "boom"},
        {"lab": "x", "status": "ok", "error": {"message": "m", "root_cause": "rank 1"}},
    ],
)
def test_off_contract_content_is_refused(data: object, tmp_path: Path) -> None:
    with pytest.raises(ResultFormatError):
        parse_result(data)
    (tmp_path / RESULT_FILE).write_text(json.dumps(data))
    assert read_result(tmp_path) is None


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b"\xff\xfe\x00garbage", b"[" * 100_000, b'{"lab": "x", "status": "ok"'],
)
def test_unreadable_files_are_none(content: bytes, tmp_path: Path) -> None:
    (tmp_path / RESULT_FILE).write_bytes(content)
    assert read_result(tmp_path) is None
    with pytest.raises(ResultFormatError):
        load_result_file(tmp_path / RESULT_FILE)


def test_a_missing_file_or_a_directory_in_its_place_is_none(tmp_path: Path) -> None:
    assert read_result(tmp_path) is None
    assert read_result(tmp_path / "no-such-dir") is None
    (tmp_path / RESULT_FILE).mkdir()
    assert read_result(tmp_path) is None


def test_events_rank_reads_back_exactly_the_names_events_file_gives() -> None:
    assert [events_rank(events_file(rank)) for rank in (0, 7, 123)] == [0, 7, 123]
    for name in ("events-rank.jsonl", "events-rankx.jsonl", "events-rank-1.jsonl",
                 "events-rank01.jsonl", "events-rank1.jsonl.tmp", "result.json"):  # fmt: skip
        assert events_rank(name) is None, name

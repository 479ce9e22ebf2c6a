"""How the ranks' check records become an exercise's verdict (no process started)."""

from __future__ import annotations

import json
from pathlib import Path

from trainer_lab.exercises.catalogue import get_exercise
from trainer_lab.exercises.protocol import checks_file
from trainer_lab.exercises.runner import merge_checks
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun


def run_with(tmp_path: Path, status: str, records: dict[int, list[dict]], ended: list[int]):
    spec = get_exercise("fsdp-per-block")
    run_dir = tmp_path / "run"
    observe = run_dir / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    for rank, lines in records.items():
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (run_dir / checks_file(rank)).write_text(text)
    for rank in ended:
        (observe / protocol.end_file(rank)).write_text(json.dumps({"rank": rank, "code": 0}))
    launch = ScriptLaunch("x", tmp_path / "s.py", (), 2, run_dir, tmp_path / "ckpt", 60.0)
    return spec, ScriptRun(launch, status, 1 if status == "error" else 0, 1.0)  # type: ignore[arg-type]


def test_a_check_a_failed_rank_never_judged_does_not_pass_on_the_others_word(tmp_path):
    spec = get_exercise("fsdp-per-block")
    passed = [{"check": name, "passed": True, "detail": "fine"} for name in spec.check_names()]
    spec, run = run_with(tmp_path, "error", {0: passed, 1: passed[:2]}, ended=[0])
    checks, _ = merge_checks(spec, run)
    verdicts = {c["name"]: c["passed"] for c in checks}
    last = spec.check_names()[-1]
    assert verdicts == {**dict.fromkeys(spec.check_names(), True), last: False}
    assert next(c for c in checks if c["name"] == last)["detail"].startswith(
        "not reached on rank 1"
    )


def test_when_every_rank_returned_a_check_one_rank_records_passes(tmp_path):
    spec = get_exercise("fsdp-per-block")
    passed = [{"check": name, "passed": True, "detail": "fine"} for name in spec.check_names()]
    spec, run = run_with(tmp_path, "ok", {0: passed, 1: []}, ended=[0, 1])
    checks, _ = merge_checks(spec, run)
    assert all(c["passed"] for c in checks)

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


JOIN_ABORT_DUMP = """Fatal Python error: Aborted

Thread 0x00007ff35ebf4b80 (most recent call first):
  File "/x/torch/distributed/distributed_c10d.py", line 3252 in all_reduce
  File "/x/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/x/torch/distributed/algorithms/join.py", line 286 in _get_num_nonjoined_procs
  File "/x/torch/distributed/algorithms/join.py", line 265 in __exit__
  File "/w/workspace/uneven.py", line 18 in train_epoch
  File "/w/trainer_lab/exercises/uneven_join/check.py", line 90 in run
"""
GLOO_MISMATCH = (
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
    "  what():  [enforce fail at pair.cc:456] op.preamble.length <= op.nbytes. 564 vs 4. "
    "Received data size doesn't match expected size. Is there a distributed collective "
    "mismatch in your code?\n"
)


def aborted_run(tmp_path: Path, stderr: str):
    from trainer_lab.exercises.catalogue import get_exercise
    from trainer_lab.root_cause import RootCause

    spec = get_exercise("uneven-join")
    run_dir = tmp_path / "run"
    observe = run_dir / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    (observe / "crash-rank0-123.txt").write_text(JOIN_ABORT_DUMP)
    logs = run_dir / "logs" / "x" / "attempt_0" / "0"
    logs.mkdir(parents=True)
    (logs / "stderr.log").write_text(stderr)
    (run_dir / checks_file(1)).write_text(
        json.dumps({"check": "no_hang", "passed": False, "detail": "peer gone"}) + "\n"
    )
    launch = ScriptLaunch("x", tmp_path / "s.py", (), 2, run_dir, tmp_path / "ckpt", 60.0)
    cause = RootCause(0, "signal", "killed by signal SIGABRT")
    return spec, ScriptRun(launch, "error", -6, 1.0, root_cause=cause)


def test_a_rank_aborted_by_a_collective_mismatch_is_named_with_its_cause(tmp_path):
    spec, run = aborted_run(tmp_path, GLOO_MISMATCH)
    checks, _ = merge_checks(spec, run)
    detail = checks[0]["detail"]
    assert detail.startswith("not reached on rank 0: "), detail
    assert "aborted in __exit__ (a collective) called at uneven.py:18" in detail
    assert "gloo received 564 bytes where 4 were expected" in detail
    assert "Join's own all-reduce" in detail


def test_an_abort_without_a_mismatch_says_only_where(tmp_path):
    spec, run = aborted_run(tmp_path, "terminate called without an active exception\n")
    checks, _ = merge_checks(spec, run)
    detail = checks[1]["detail"]
    assert "aborted in __exit__ (a collective) called at uneven.py:18" in detail
    assert "collective met another rank's" not in detail

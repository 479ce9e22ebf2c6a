"""Reading what user code left behind: capped, shape-checked, never executed."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.usercode import evidence

STACKS = """\
Thread 0x00007f01 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 331 in wait
  File "/x/site-packages/torch/distributed/elastic/agent.py", line 10 in run

Current thread 0x00007f00 (most recent call first):
  File "/x/site-packages/torch/distributed/distributed_c10d.py", line 4700 in barrier
  File "/x/site-packages/torch/distributed/c10d_logger.py", line 81 in wrapper
  File "/ws/train.py", line 42 in main
  File "/ws/train.py", line 50 in <module>
  File "<frozen runpy>", line 291 in run_path
"""


def test_step_lines_keeps_step_lines_and_reports_the_rest(tmp_path: Path):
    out = tmp_path / "stdout.log"
    out.write_text(
        'starting\n{"step": 1, "loss": 0.5}\n{"step": 2, "loss": NaN}\n{"step": "3"}\n{oops\n'
    )
    found = evidence.step_lines(out)
    assert [line["step"] for line in found.lines] == [1, 2]
    assert [number for number, _ in found.bad] == [4, 5]
    assert found.other == 1 and not found.capped


def test_step_lines_reads_at_most_the_cap(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(evidence, "READ_CAP_BYTES", 1000)
    out = tmp_path / "stdout.log"
    out.write_text('{"step": 1, "loss": 1.0}\n' + "x" * 5000 + "\n")
    found = evidence.step_lines(out)
    assert found.capped and len(found.lines) == 1


def test_where_stuck_names_the_collective_and_the_script_line():
    where = evidence.where_stuck(STACKS, Path("/ws/train.py"))
    assert where == "in barrier (a collective) called at train.py:42"


def test_where_stuck_in_the_script_itself():
    text = 'Current thread 0x1 (most recent call first):\n  File "/ws/train.py", line 3 in spin\n'
    assert evidence.where_stuck(text, Path("/ws/train.py")) == "running spin at train.py:3"


def test_records_with_the_wrong_shape_are_skipped(tmp_path: Path):
    (tmp_path / "steps-rank0.jsonl").write_text(
        '{"pstep": 2, "post": {"digest": "b"}}\n[1, 2]\n{"pstep": "x", "post": {}}\n'
        '{"pstep": 1, "post": {"digest": "a"}}\nnot json\n'
    )
    records = evidence.step_records(tmp_path, 0)
    assert [r["post"]["digest"] for r in records] == ["a", "b"]
    (tmp_path / "fetch-rank0.jsonl").write_text('{"pstep": 0, "id": 3}\n{"pstep": 0, "id": "3"}\n')
    assert evidence.fetches(tmp_path, 0) == [(0, 3)]


def test_deeply_nested_json_is_a_bad_line_not_a_crash(tmp_path: Path):
    out = tmp_path / "stdout.log"
    out.write_text("{" + '"a":[' * 100_000 + "\n" + '{"step": 1, "loss": 0.1}\n')
    found = evidence.step_lines(out)
    assert [number for number, _ in found.bad] == [1]
    assert len(found.lines) == 1


def _observe(tmp_path: Path, files: dict[str, str]) -> Path:
    observe = tmp_path / "observe"
    observe.mkdir()
    for name, text in files.items():
        (observe / name).write_text(text)
    return observe


def test_a_rank_the_teardown_guard_ended_is_the_runtimes_race(tmp_path):
    observe = _observe(
        tmp_path,
        {
            "end-rank0.json": '{"rank": 0, "code": 0}',
            "teardown-rank1-77.txt": "Thread 0x1 (most recent call first):\n  <no Python frame>\n",
        },
    )
    note = evidence.teardown_aborts(observe, [0, 1])
    assert note is not None and note.startswith("rank 1 stuck 5 s in gloo's teardown")


@pytest.mark.parametrize(
    "files",
    [
        {"end-rank0.json": '{"rank": 0, "code": 0}', "teardown-rank1-77.txt": ""},  # armed only
        {"end-rank0.json": '{"rank": 0, "code": 0}'},  # rank 1 failed otherwise
        {"teardown-rank0-5.txt": "stacks", "teardown-rank1-6.txt": "stacks",
         "saves-rank1.jsonl": '{"event": "killed", "rank": 1}\n'},  # a fault was injected
    ],
)  # fmt: skip
def test_without_a_fired_guard_a_failed_rank_stays_a_failure(tmp_path, files):
    assert evidence.teardown_aborts(_observe(tmp_path, files), [0, 1]) is None

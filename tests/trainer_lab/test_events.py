"""Event lines: the step fast path writes what the generic encoder writes, every line reaches
the kernel before write returns (a SIGKILLed writer leaves whole lines), and the trainer's
file holds exactly the records train_step returns."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.paths import REPO
from trainer_lab.events import (
    PHASES,
    EventWriter,
    encode_fields,
    encode_step,
    events_path,
    read_events,
    read_run_events,
    steps_of,
)
from trainer_lab.result import events_file

GENERIC = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode

PHASE_NS = (68542, 2100, 81681, 116984, 400, 225800, 2_500_000_000)  # perf_counter_ns deltas


def _generic_line(rank: int, now: float, record: dict) -> dict:
    return json.loads(GENERIC({"event": "step", "rank": rank, "time": now, **record}))


@pytest.mark.parametrize(
    ("loss", "lr", "extra"),
    [
        (0.024440281093120575, 0.00030000000000000003, {}),
        (1.0, 3e-3, {"run": "bench"}),
        (0.1, 1e-4, {"grad_digest": "0a1b2c3d4e5f6789", "run": 'odd "label"\n'}),
        (float("nan"), 0.0, {"run": "nan"}),
        (float("inf"), 1.0, {}),
    ],
)
def test_step_line_matches_the_generic_encoder(loss: float, lr: float, extra: dict) -> None:
    ids = [49923, 9764, 0, 35233]
    line = encode_step(
        3, 1795340813409186400, 12, 1, loss, lr, ids, PHASE_NS, encode_fields(**extra)
    )
    assert line.endswith("}\n") and line.count("\n") == 1
    fast = json.loads(line)
    record = {
        "step": 12,
        "epoch": 1,
        "loss": loss,
        "lr": lr,
        "sample_ids": ids,
        "phases": {name: ns / 1e9 for name, ns in zip(PHASES, PHASE_NS, strict=True)},
        **extra,
    }
    slow = _generic_line(3, 1795340813.4091864, record)  # time_ns read back as seconds
    assert list(fast) == list(slow)  # same keys in the same order
    assert list(fast["phases"]) == list(PHASES)
    assert '"data_wait":68542e-9,' in line  # integer nanoseconds, read back as seconds
    if math.isnan(loss):
        assert math.isnan(fast.pop("loss")) and math.isnan(slow.pop("loss"))
    assert fast == slow  # loss, lr, time and phases (ns / 1e9) round-trip bit for bit


def test_step_line_rejects_a_wrong_phase_count() -> None:
    with pytest.raises(ValueError, match="expected 7 phase times"):
        encode_step(0, 0, 1, 0, 0.5, 0.1, [1], PHASE_NS[:-1])


def test_writer_lines_from_two_writers_interleave_whole(tmp_path: Path) -> None:
    first, second = EventWriter(tmp_path, 0), EventWriter(tmp_path, 0)  # same file, O_APPEND
    for step in range(1, 4):
        first.write_step(step, 0, 0.5, 0.1, [step], PHASE_NS, encode_fields(run="a"))
        second.write("checkpoint", step=step, path="x", run="a")
    first.close()
    second.close()
    events = read_events(events_path(tmp_path, 0))
    assert [(e["event"], e["step"]) for e in events] == [
        (kind, step) for step in range(1, 4) for kind in ("step", "checkpoint")
    ]
    assert [e["sample_ids"] for e in steps_of(events, "a")] == [[1], [2], [3]]
    assert len(events_path(tmp_path, 0).read_text().splitlines()) == 6


def test_run_events_are_read_from_the_contract_file_names_and_skip_strays(tmp_path: Path) -> None:
    for rank in (0, 1, 12):
        EventWriter(tmp_path, rank).write("hello")
        assert events_path(tmp_path, rank) == tmp_path / events_file(rank)
    for stray in ("events-rankx.jsonl", "events-rank-1.jsonl", "events-rank01.jsonl"):
        (tmp_path / stray).write_text('{"event": "stray"}\n')
    found = read_run_events(tmp_path)
    assert sorted(found) == [0, 1, 12]
    assert [e["event"] for events in found.values() for e in events] == ["hello"] * 3


def test_closed_writer_refuses_to_write(tmp_path: Path) -> None:
    writer = EventWriter(tmp_path, 1)
    writer.close()
    writer.close()  # idempotent
    assert writer.closed
    with pytest.raises(ValueError, match="closed"):
        writer.write("step", step=1)
    with pytest.raises(ValueError, match="closed"):
        writer.write_step(1, 0, 0.5, 0.1, [1], PHASE_NS)


def test_sigkilled_writer_leaves_every_line_written(tmp_path: Path) -> None:
    # No Python-side buffer: the last line written before SIGKILL is in the file.
    code = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from trainer_lab.events import EventWriter, encode_fields
        writer = EventWriter(Path({str(tmp_path)!r}), 2)
        tail = encode_fields(run="killed")
        for step in range(1, 51):
            writer.write_step(step, 0, 1.0 / step, 0.1, [step, step + 1], {PHASE_NS!r}, tail)
        writer.write("about_to_die", step=50)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, timeout=60)
    assert out.returncode == -signal.SIGKILL, out.stderr.decode()[-2000:]
    events = read_events(events_path(tmp_path, 2))
    assert [e["step"] for e in steps_of(events, "killed")] == list(range(1, 51))
    assert events[-1]["event"] == "about_to_die"
    assert [e["loss"] for e in steps_of(events)] == [1.0 / s for s in range(1, 51)]


def test_trainer_file_holds_the_records_train_step_returns(tmp_path: Path) -> None:
    # torch only in a child: the pytest process must not import it.
    code = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        from trainer_lab.config import TrainConfig
        from trainer_lab.events import EventWriter
        from trainer_lab.train.trainer import Trainer
        cfg = TrainConfig(steps=5, n_samples=40, global_batch=8, log_grad_digest=True)
        writer = EventWriter(Path({str(tmp_path)!r}), 0)
        labelled = Trainer(cfg, rank=0, world_size=1, events=writer, run_label="labelled")
        plain = Trainer(cfg.with_(log_grad_digest=False), rank=0, world_size=1, events=writer)
        records = labelled.train() + plain.train()
        writer.close()
        json.dump(records, sys.stdout)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    returned = json.loads(out.stdout)
    written = [e for e in read_events(events_path(tmp_path, 0)) if e["event"] == "step"]
    assert len(written) == len(returned) == 10
    for record, event in zip(returned, written, strict=True):
        assert event["event"] == "step" and event["rank"] == 0 and event["time"] > 0
        assert list(event["phases"]) == list(PHASES)
        assert all(event["phases"][p] > 0 for p in ("data_wait", "forward", "backward"))
        # phases to the nanosecond: the file and the returned record agree bit for bit
        assert {k: v for k, v in event.items() if k not in ("event", "rank", "time")} == record
    assert [e.get("run") for e in written] == ["labelled"] * 5 + [None] * 5
    assert all(len(e["grad_digest"]) == 16 for e in written[:5])
    assert all("grad_digest" not in e for e in written[5:])

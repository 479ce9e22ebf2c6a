"""The stop file that ends a cluster lab's job: the driver writes a step past every rank's, and
every rank of train_worker.py stops after that same step (an empty file: stop at once)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trainer_lab.cluster.lab_run import STOP_FILE, ClusterLab
from trainer_lab.cluster.train_worker import stop_step


def _write_events(out: Path, pid: int, steps: list[int]) -> None:
    lines = [json.dumps({"event": "step", "step": s, "time": float(s), "pid": pid}) for s in steps]
    (out / f"events-{pid}.jsonl").write_text("\n".join(lines) + "\n")


def _lab(out: Path) -> ClusterLab:
    none: Any = None  # stop_after reads only the workers' folder
    return ClusterLab(none, none, none, out)


def test_stop_after_names_a_step_past_the_newest_one_and_each_rank_reads_it(
    tmp_path: Path,
) -> None:
    _write_events(tmp_path, 11, [1, 2, 3])
    _write_events(tmp_path, 12, [1, 2, 3, 4])
    target = _lab(tmp_path).stop_after(3)
    assert target == 7
    assert (tmp_path / STOP_FILE).read_text() == "7"
    assert stop_step(str(tmp_path / STOP_FILE)) == 7
    assert not list(tmp_path.glob("*.part"))


def test_no_stop_file_goes_on_and_an_empty_one_stops_at_once(tmp_path: Path) -> None:
    stop = tmp_path / STOP_FILE
    assert stop_step(str(stop)) is None
    assert stop_step(None) is None
    stop.touch()
    assert stop_step(str(stop)) == 0

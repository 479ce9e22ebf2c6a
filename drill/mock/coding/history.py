"""Record a coding-round grading in the lab history (the `lab_run` table), so it is listed with
the lab runs: the Labs screen shows a `mock-coding` row with its past gradings, each reopenable.

The history is a convenience next to the result itself: a database that cannot be opened or
written only costs a notice, never the grading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def record_grading(result: Mapping[str, Any], out_dir: Path, notify: Callable[[str], None]) -> None:
    from drill.labs.recorder import RunRecorder

    recorder = RunRecorder(notify)
    recorder.start(str(result["lab"]), dict(result["params"]), int(result["world_size"]), out_dir)
    try:
        recorder.finish(result)
    finally:
        recorder.close()

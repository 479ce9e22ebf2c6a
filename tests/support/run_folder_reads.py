"""Every trainer_lab reader of a run folder, run over one folder (issue 32, item 6):
`python -m tests.support.run_folder_reads RUN_DIR` prints one JSON object, reader -> what it
returned (or the error it raised, as "raised Type: message"). A reader that blocks on a file
planted there (tests.support.hostile_files) keeps this process from ending.

`write_run_folder(run_dir)` writes a run folder where every reader finds something, and
RUN_FILES names each file a reader reads, for planting a hostile one in its place.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from trainer_lab.exercises.protocol import checks_file
from trainer_lab.result import RESULT_FILE, events_file, failure_file, new_result, write_result
from trainer_lab.root_cause import TORCHRUN_LOG
from trainer_lab.usercode import protocol

LOGS = "logs/job/attempt_0/0"
OBSERVE = protocol.OBSERVE_DIR
RUN_FILES = (
    RESULT_FILE,
    events_file(0),
    failure_file(0),
    TORCHRUN_LOG,
    "driver.log",
    "stdout.log",
    f"{LOGS}/stdout.log",
    f"{LOGS}/stderr.log",
    f"{LOGS}/error.json",
    checks_file(0),
    f"{OBSERVE}/{protocol.steps_file(0)}",
    f"{OBSERVE}/{protocol.fetch_file(0)}",
    f"{OBSERVE}/{protocol.optimizer_file(0)}",
    f"{OBSERVE}/{protocol.saves_file(0)}",
    f"{OBSERVE}/{protocol.probes_file(0)}",
    f"{OBSERVE}/{protocol.end_file(0)}",
    f"{OBSERVE}/{protocol.stack_file(0, 7)}",
    f"{OBSERVE}/{protocol.crash_file(0, 7)}",
    f"{OBSERVE}/{protocol.teardown_file(0, 7)}",
)
SCRIPT = "train.py"


def write_run_folder(run_dir: Path) -> None:
    """A run folder of one rank where every reader finds what it looks for."""

    def put(name: str, text: str) -> None:
        path = run_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    write_result(run_dir, new_result("lab", {}, 1, run_dir))
    line = {"event": "step", "rank": 0, "time": 1.0, "step": 1, "loss": 1.0}
    put(events_file(0), json.dumps(line, separators=(",", ":")) + "\n")  # as EventWriter does
    failure = {"rank": 0, "time": 1.0, "type": "ValueError", "message": "bad", "traceback": "t"}
    put(failure_file(0), json.dumps(failure))
    put(TORCHRUN_LOG, "Root Cause (first observed failure):\n  rank : 0 (local_rank: 0)\n"
        "  exitcode : 1 (pid: 9)\n")  # fmt: skip
    put("driver.log", "driver said this\n")
    put("stdout.log", '{"step": 1, "loss": 1.5}\n')
    put(f"{LOGS}/stdout.log", "rank output\n")
    put(f"{LOGS}/stderr.log", "terminate called\nwhat():  boom\n")
    put(f"{LOGS}/error.json", json.dumps({"message": {"message": "from error file"}}))
    put(checks_file(0), json.dumps({"check": "c", "passed": True, "detail": "d"}) + "\n")
    post = {"digest": "ab"}
    put(f"{OBSERVE}/{protocol.steps_file(0)}", json.dumps({"pstep": 1, "post": post}) + "\n")
    put(f"{OBSERVE}/{protocol.fetch_file(0)}", json.dumps({"pstep": 0, "id": 3}) + "\n")
    put(f"{OBSERVE}/{protocol.optimizer_file(0)}", json.dumps({"n": 1}) + "\n")
    put(f"{OBSERVE}/{protocol.saves_file(0)}", json.dumps({"event": "save"}) + "\n")
    put(f"{OBSERVE}/{protocol.probes_file(0)}", json.dumps({"probe": 1}) + "\n")
    put(f"{OBSERVE}/{protocol.end_file(0)}", json.dumps({"rank": 0, "code": 0}))
    stack = f'Thread 1:\n  File "/w/{SCRIPT}", line 4 in main\n'
    put(f"{OBSERVE}/{protocol.stack_file(0, 7)}", stack)
    put(f"{OBSERVE}/{protocol.crash_file(0, 7)}", "Fatal Python error: Aborted\n")
    put(f"{OBSERVE}/{protocol.teardown_file(0, 7)}", stack)


def _outcome(call: Any) -> Any:
    try:
        value = call()
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"
    return json.loads(json.dumps(value, default=str))


def read_everything(run_dir: Path) -> dict[str, Any]:
    from trainer_lab.api import _end
    from trainer_lab.context import StepTail
    from trainer_lab.events import read_run_events, trim_run_events
    from trainer_lab.exercises.catalogue import EXERCISES
    from trainer_lab.exercises.runner import merge_checks
    from trainer_lab.rank_output import RankOutputTail
    from trainer_lab.result import load_result_file, read_result
    from trainer_lab.root_cause import (
        find_root_cause,
        rank_reports,
        read_failures,
        torchrun_exit_codes,
        torchrun_root_cause_rank,
    )
    from trainer_lab.usercode import evidence
    from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun

    observe = run_dir / OBSERVE
    script = Path(SCRIPT)
    spec = next(iter(EXERCISES.values()))
    launch = ScriptLaunch("x", run_dir / SCRIPT, (), 1, run_dir, run_dir / "ckpt", 60.0)
    run = ScriptRun(launch, "ok", 0, 1.0)
    step_tail = StepTail(run_dir)
    readers = {
        "read_result": lambda: read_result(run_dir) is not None,
        "load_result_file": lambda: load_result_file(run_dir / RESULT_FILE)["lab"],
        "read_run_events": lambda: read_run_events(run_dir),
        "read_failures": lambda: [f["message"] for f in read_failures(run_dir)],
        "find_root_cause": lambda: str(find_root_cause(run_dir, [], "failed", 9.0, 1)),
        "find_root_cause_timeout": lambda: str(find_root_cause(run_dir, [], "timeout", 9.0, 1)),
        "rank_reports": lambda: rank_reports(run_dir, [], {}, 1)[0]["error"],
        "torchrun_exit_codes": lambda: torchrun_exit_codes(run_dir),
        "torchrun_root_cause_rank": lambda: torchrun_root_cause_rank(run_dir),
        "step_records": lambda: len(evidence.step_records(observe, 0)),
        "fetches": lambda: evidence.fetches(observe, 0),
        "optimizer_records": lambda: list(evidence.optimizer_records(observe, 0)),
        "save_events": lambda: len(evidence.save_events(observe, [0])),
        "probes": lambda: evidence.read_jsonl(observe / protocol.probes_file(0)),
        "step_lines": lambda: evidence.step_lines(run_dir / "stdout.log").lines,
        "hang_summary": lambda: evidence.hang_summary(observe, script),
        "crash_dumps": lambda: evidence.crash_dumps(observe, 0),
        "script_ended": lambda: evidence.script_ended(observe, 0),
        "teardown_dumps": lambda: len(evidence.teardown_dumps(observe, 0)),
        "merge_checks_errors": lambda: merge_checks(spec, run)[1],
        "rank_output": lambda: RankOutputTail(run_dir / "logs").poll(),
        "step_tail": lambda: (step_tail.poll(), step_tail.step),
        "trim_run_events": lambda: trim_run_events(run_dir),
        "driver_log": lambda: _end("x", {}, 1, run_dir, "error", 9.0, 1, 0.0)["error"],
    }
    return {name: _outcome(call) for name, call in readers.items()}


if __name__ == "__main__":
    print(json.dumps(read_everything(Path(sys.argv[1]))))

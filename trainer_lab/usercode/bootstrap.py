"""`python -m trainer_lab.usercode.bootstrap SCRIPT [ARGS...]`: run a user's script as
`python SCRIPT ARGS` would (runpy, `__name__ == "__main__"`, the script's folder first on
sys.path), observed by trainer_lab.usercode.recorder, under resource limits (limits.py).

Works the same as a plain process and as a torchrun worker (rank from RANK). An uncaught error is
written to failures/rank{R}.json (the launcher's format, plus where in the script it happened) so
the launcher names the first failing rank.
"""

from __future__ import annotations

import os

from trainer_lab.procs import PARENT_ENV, die_with_parent

die_with_parent(int(os.environ[PARENT_ENV]) if PARENT_ENV in os.environ else None)

import json  # noqa: E402
import runpy  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

from trainer_lab.result import failure_file  # noqa: E402
from trainer_lab.usercode import protocol  # noqa: E402
from trainer_lab.usercode.limits import apply_limits  # noqa: E402


def where_in_script(error: BaseException, script: Path) -> str:
    """`train.py:LINE` of the innermost frame in the script (or the file of a SyntaxError)."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{Path(error.filename).name}:{error.lineno}"
    found = ""
    for frame in traceback.extract_tb(error.__traceback__):
        if Path(frame.filename).resolve() == script:
            found = f"{script.name}:{frame.lineno}"
    return found


def write_failure(run_dir: Path, rank: int, error: BaseException, script: Path) -> None:
    where = where_in_script(error, script)
    message = str(error) if not isinstance(error, SyntaxError) else error.msg
    if isinstance(error, MemoryError):
        message = message or "out of memory (address-space limit)"
    record = {
        "rank": rank,
        "time": time.time(),
        "type": type(error).__name__,
        "message": f"{message} ({where})" if where else message,
        "where": where,
        "traceback": "".join(traceback.format_exception(error)),
    }
    path = run_dir / failure_file(rank)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m trainer_lab.usercode.bootstrap SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    apply_limits()
    script = Path(argv[0]).resolve()
    rank = int(os.environ.get("RANK", "0"))
    observe_dir = Path(os.environ[protocol.OBSERVE_ENV])
    run_dir = observe_dir.parent

    from trainer_lab.usercode.recorder import Recorder  # torch: after the limits are set

    recorder = Recorder(observe_dir, rank, dict(os.environ))
    recorder.install()
    sys.argv = [str(script), *argv[1:]]
    sys.path[0] = str(script.parent)
    try:
        try:
            dataset = __import__(protocol.DATASET_MODULE)
        except ImportError:
            dataset = None
        if dataset is not None:
            recorder.watch_dataset(dataset)
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as error:
        code = error.code
        if code not in (None, 0):
            if not isinstance(code, int):
                print(code, file=sys.stderr)
            return code if isinstance(code, int) else 1
        return 0
    except BaseException as error:
        write_failure(run_dir, rank, error, script)
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

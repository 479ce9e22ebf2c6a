"""`python -m trainer_lab.usercode.bootstrap SCRIPT [ARGS...]`: run a user's script as
`python SCRIPT ARGS` would (runpy, `__name__ == "__main__"`, the script's folder first on
sys.path), observed by trainer_lab.usercode.recorder, under resource limits (limits.py).

Works the same as a plain process and as a torchrun worker (rank from RANK). An uncaught error is
written to failures/rank{R}.json (the launcher's format, plus where in the script it happened) so
the launcher names the first failing rank.

When the script returns, end-rank{R}.json records it; then the Python-level exit work runs
(atexit handlers, stdio flushed) and the process leaves with os._exit, skipping the C++ static
destructors: gloo can SIGABRT a process while it tears its connections down ("terminate called
without an active exception"), a race in torch, not in the script. A fatal signal's Python stacks
go to crash-rank{R}-PID.txt (faulthandler), so a verdict can tell where a rank aborted.
"""

from __future__ import annotations

import os

from trainer_lab.procs import PARENT_ENV, die_with_parent

die_with_parent(int(os.environ[PARENT_ENV]) if PARENT_ENV in os.environ else None)

import atexit  # noqa: E402
import contextlib  # noqa: E402
import faulthandler  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

from trainer_lab.result import failure_file  # noqa: E402
from trainer_lab.usercode import protocol  # noqa: E402
from trainer_lab.usercode.dataplan import DataPlan  # noqa: E402
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


def group_alive() -> bool:
    """Whether the script left torch.distributed's default process group undestroyed."""
    dist = sys.modules.get("torch.distributed")
    try:
        return bool(dist is not None and dist.is_available() and dist.is_initialized())
    except Exception:
        return False


def write_end(observe_dir: Path, rank: int, code: int) -> None:
    record = {"rank": rank, "code": code, "time": time.time(), "group_alive": group_alive()}
    (observe_dir / protocol.end_file(rank)).write_text(json.dumps(record))


def leave(code: int) -> None:
    """Exit after the script returned: Python's exit work, then no C++ teardown (see above)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def hide_protocol_env() -> None:
    """Remove this protocol's variables (read by now) from a coding-round script's environment:
    they name the launch (its directories, its faults), which the script must not tell apart."""
    for name in [n for n in os.environ if n.startswith(protocol.ENV_PREFIX)]:
        del os.environ[name]


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m trainer_lab.usercode.bootstrap SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    apply_limits()
    script = Path(argv[0]).resolve()
    rank = int(os.environ.get("RANK", "0"))
    observe_dir = Path(os.environ[protocol.OBSERVE_ENV])
    run_dir = observe_dir.parent

    from trainer_lab.usercode.fswatch import FsWatch
    from trainer_lab.usercode.recorder import Recorder  # torch: after the limits are set
    from trainer_lab.usercode.teardown import TeardownGuard

    recorder = Recorder(observe_dir, rank, dict(os.environ))
    recorder.install()
    watch = FsWatch(recorder, dict(os.environ))
    watch.install()
    from trainer_lab.usercode.sigterm import install_term_fault

    term = install_term_fault(recorder, dict(os.environ), watch)  # outermost torch.save wrapper
    if os.environ.get(protocol.PROBES_ENV):
        from trainer_lab.usercode.probes import Probes

        Probes(recorder, dict(os.environ)).install()
    if os.environ.get(protocol.NO_DROPOUT_ENV):
        from trainer_lab.usercode.dropout import switch_off_dropout

        switch_off_dropout()
    guard = TeardownGuard(observe_dir, rank, os.getpid())
    guard.install()
    crash = open(observe_dir / protocol.crash_file(rank, os.getpid()), "w")  # noqa: SIM115
    faulthandler.enable(file=crash, all_threads=True)
    sys.argv = [str(script), *argv[1:]]
    sys.path[0] = str(script.parent)
    try:
        plan = DataPlan.from_env(os.environ.pop(protocol.DATA_ENV, None))
        try:
            dataset = __import__(protocol.DATASET_MODULE)
        except ImportError:
            dataset = None
        if dataset is not None:
            world = int(os.environ.get("WORLD_SIZE", "1"))
            recorder.watch_dataset(dataset, plan, world)
            hide_protocol_env()
        runpy.run_path(str(script), run_name="__main__")
        if term is not None:
            term.at_end()
    except SystemExit as error:
        guard.disarm()
        code = error.code
        if code not in (None, 0):
            if not isinstance(code, int):
                print(code, file=sys.stderr)
            code = code if isinstance(code, int) else 1
        else:
            code = 0
        write_end(observe_dir, rank, code)
        return code
    except BaseException as error:
        guard.disarm()
        write_failure(run_dir, rank, error, script)
        traceback.print_exc()
        return 1
    guard.disarm()
    write_end(observe_dir, rank, 0)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    if code == 0:
        leave(0)
    raise SystemExit(code)

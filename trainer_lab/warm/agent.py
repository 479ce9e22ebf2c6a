"""`python -m trainer_lab.warm.agent TORCHRUN-ARGS`: torchrun, with ranks forked from here.

The arguments are torchrun's (`torch.distributed.run`'s own parser and `config_from_args`): the
same rendezvous (c10d, `--standalone`), restarts, monitor interval, per-rank log directory,
redirects and error files, and the same environment for each rank (RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR/PORT, TORCHELASTIC_*). Two things differ: the entrypoint is a function
and the start method `fork`, so a rank is a fork of this (warm) process instead of a new
interpreter; and each rank runs the module in a child of its own (`run_rank`), so the module may
end with `os._exit` or a signal exactly as under torchrun (elastic's function workers must
return to hand back a value); what the rank leaves running ends with it. Failures end this
process as torchrun's would: the "Root Cause" report on stderr and exit status 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from torch.distributed import run as torchrun
from torch.distributed.elastic.multiprocessing.errors import (
    ChildFailedError,
    ProcessFailure,
    record,
)
from torch.distributed.launcher.api import elastic_launch

from trainer_lab.containment import keep_tree
from trainer_lab.files import read_regular
from trainer_lab.procs import PARENT_ENV, die_with_parent, exit_like
from trainer_lab.warm import rendezvous


def run_rank(module: str, *args: str) -> None:
    """One rank: run `module` in a child, pass signals on, end as the child ended; what the
    child left running is killed with it (containment.keep_tree)."""
    expected = os.environ.get(PARENT_ENV)  # the agent: this wrapper dies with it, as a rank would
    die_with_parent(int(expected) if expected else None)
    kept = keep_tree()
    if kept is None:  # the child
        try:
            from trainer_lab.warm.fresh import run_as_main

            run_as_main(module, list(args))
        finally:
            os._exit(127)
    child, code = kept
    _record_exit(child, code)
    if code != 0:  # end as the child did (a signal too), so the agent reports it as torchrun would
        exit_like(code)


# Where each rank's wrapper records how its rank ended (set in main, inherited by the forks).
_EXITS: Path | None = None


def _record_exit(pid: int, code: int) -> None:
    if _EXITS is None:
        return
    rank = os.environ.get("RANK", "0")
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    record = {
        "local_rank": int(os.environ.get("LOCAL_RANK", "0")),
        "pid": pid,
        "exitcode": code,
        "time": time.time(),
        "error_file": os.environ.get("TORCHELASTIC_ERROR_FILE", ""),
    }
    with contextlib.suppress(OSError):
        (_EXITS / f"{attempt}-{rank}.json").write_text(json.dumps(record))


def every_failure(error: ChildFailedError, exits: Path) -> ChildFailedError:
    """The launch's failure with every rank that failed in the last attempt, each at the time it
    ended: elastic's function workers report only the first exit they see and stop the others,
    where torchrun lists every failed rank (the labs' root-cause rules read that list)."""
    records: dict[int, dict[int, dict[str, object]]] = {}
    for path in exits.glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            attempt, rank = (int(part) for part in path.stem.split("-"))
            found = json.loads(read_regular(path, 64 * 1024))
            if isinstance(found, dict) and "exitcode" in found:
                records.setdefault(attempt, {})[rank] = found
    if not records:
        return error
    last = records[max(records)]
    failures = dict(error.failures)
    for rank, found in last.items():
        if found["exitcode"] == 0:
            continue
        failure = ProcessFailure(
            int(found["local_rank"]),  # type: ignore[call-overload]
            int(found["pid"]),  # type: ignore[call-overload]
            int(found["exitcode"]),  # type: ignore[call-overload]
            str(found["error_file"]),
        )
        if not os.path.isfile(failure.error_file):
            failure.timestamp = found["time"]  # type: ignore[assignment]
        failures[rank] = failure
    return ChildFailedError(error.name, dict(sorted(failures.items())))


@record
def main(argv: list[str] | None = None) -> None:
    rendezvous.register()
    os.environ[PARENT_ENV] = str(os.getpid())  # the ranks' expected parent
    args = torchrun.parse_args(
        ["--start-method", "fork", *(sys.argv[1:] if argv is None else argv)]
    )
    if not args.module:
        raise SystemExit("trainer_lab.warm.agent runs modules only (-m MODULE)")
    if args.standalone:  # as torchrun: c10d on localhost:0, a new id
        args.rdzv_backend = "c10d"
        args.rdzv_endpoint = "localhost:0"
        args.rdzv_id = str(uuid.uuid4())
        if rendezvous.fits(args.max_restarts):
            args.rdzv_backend, args.rdzv_endpoint = rendezvous.BACKEND, "localhost:0"
    if args.master_port is None:
        args.master_port = 29500
    config, _command, command_args = torchrun.config_from_args(args)
    module_args = command_args[command_args.index("-m") + 1 :]
    global _EXITS
    if args.log_dir:  # beside the ranks' logs: a killed agent leaves nothing in /tmp
        Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    _EXITS = Path(tempfile.mkdtemp(prefix=".exits-", dir=args.log_dir or None))
    try:
        elastic_launch(config=config, entrypoint=run_rank)(*module_args)
    except ChildFailedError as error:
        raise every_failure(error, _EXITS) from None
    finally:
        shutil.rmtree(_EXITS, ignore_errors=True)


if __name__ == "__main__":
    expected = os.environ.get(PARENT_ENV)
    die_with_parent(int(expected) if expected else None)
    main()

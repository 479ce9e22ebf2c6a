"""The checker side of an exercise (torch; runs only in the checked processes).

    python -m trainer_lab.usercode.bootstrap _drill_check.py CHECKER_MODULE USER_FILE

`main` loads the user's file by path, starts the gloo process group (short collective timeout,
so a collective that not every rank calls raises within seconds instead of hanging until the
deadline) and calls the checker's `run(ctx)`. Checks are appended to `exercise-rank{R}.jsonl`
in the run dir one line at a time, so checks recorded before a crash or a hang survive it.
Ranks exchange evidence through the rendezvous store, never through collectives, so a user's
mismatched collective cannot pair with the checker's.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from trainer_lab.exercises.protocol import checks_file
from trainer_lab.usercode import protocol

COLLECTIVE_TIMEOUT_S = 4.0
STORE_TIMEOUT_S = 30.0


class UserCodeError(Exception):
    """The user's code raised; the message says where (`file.py:LINE: Type: message`)."""


def where(error: BaseException, user_file: Path) -> str:
    """`file.py:LINE: Type: message`, the line being the innermost frame in the user's file."""
    line = ""
    for frame in traceback.extract_tb(error.__traceback__):
        if Path(frame.filename).resolve() == user_file.resolve():
            line = f"{user_file.name}:{frame.lineno}: "
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = f"{line}{type(error).__name__}: {message}"
    return text[:400]


class Ctx:
    def __init__(self, user: ModuleType, user_file: Path, run_dir: Path) -> None:
        self.user = user
        self.user_file = user_file
        self.rank = int(os.environ.get("RANK", "0"))
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.distributed = "RANK" in os.environ
        self.run_dir = run_dir
        self.scratch = run_dir / "scratch" / f"rank{self.rank}"
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._out = (run_dir / checks_file(self.rank)).open("a")
        self._store: Any = None

    def check(self, name: str, passed: bool, detail: str) -> bool:
        """Record a check of this rank (a check passes when it passed on every rank)."""
        record = {"check": name, "passed": bool(passed), "detail": detail[:2000]}
        self._out.write(json.dumps(record) + "\n")
        self._out.flush()
        return bool(passed)

    def error(self, text: str) -> None:
        self._out.write(json.dumps({"error": text[:2000]}) + "\n")
        self._out.flush()

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the user's code; its exception becomes a UserCodeError naming file and line."""
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            raise UserCodeError(where(error, self.user_file)) from error

    def attr(self, name: str) -> Any:
        found = getattr(self.user, name, None)
        if found is None:
            raise UserCodeError(f"{self.user_file.name} defines no {name}")
        return found

    # --- evidence between ranks, through the rendezvous store ------------------------------
    def _kv(self) -> Any:
        if self._store is None:
            import torch.distributed as dist

            store = dist.TCPStore(
                os.environ["MASTER_ADDR"],
                int(os.environ["MASTER_PORT"]),
                is_master=False,
                timeout=timedelta(seconds=STORE_TIMEOUT_S),
            )
            prefix = f"drill-exercise/{os.environ.get('TORCHELASTIC_RUN_ID', 'run')}/"
            self._store = dist.PrefixStore(prefix, store)
        return self._store

    def gather(self, key: str, value: Any) -> list[Any]:
        """Every rank's JSON-able `value` for `key`, in rank order (blocks for the others)."""
        if not self.distributed:
            return [value]
        kv = self._kv()
        kv.set(f"{key}/{self.rank}", json.dumps(value))
        return [json.loads(kv.get(f"{key}/{r}")) for r in range(self.world_size)]


def load_user(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("exercise_user", path)
    if spec is None or spec.loader is None:
        raise UserCodeError(f"cannot import {path.name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["exercise_user"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise UserCodeError(where(error, path)) from error
    return module


def main(argv: list[str]) -> int:
    checker_name, user_name = argv[0], argv[1]
    run_dir = Path(os.environ[protocol.OBSERVE_ENV]).parent
    user_file = Path(user_name).resolve()
    out = run_dir / checks_file(int(os.environ.get("RANK", "0")))
    import torch
    import torch.distributed as dist

    torch.manual_seed(0)
    torch.set_num_threads(1)
    if "RANK" in os.environ:
        dist.init_process_group("gloo", timeout=timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    checker = importlib.import_module(checker_name)
    try:
        ctx = Ctx(load_user(user_file), user_file, run_dir)
        checker.run(ctx)
    except UserCodeError as error:
        with out.open("a") as f:
            f.write(json.dumps({"error": str(error)}) + "\n")
        return 1
    if dist.is_initialized():
        dist.destroy_process_group()
    return 0

"""`python -m trainer_lab.warm.server --fd N`: the warm process (imports torch; see __init__).

Talks over one AF_UNIX SOCK_SEQPACKET socket (fd N) with its parent, one JSON message per packet:
- in:  {"id", "module", "args", "env", "cwd"} with three fds (stdin, stdout, stderr) attached;
- out: {"ready", "pid", "preload_s"} once, when the preload is done;
       {"id", "pid"} when the request's process started, or {"id", "error"};
       {"exit": pid, "returncode"} when it ended (returncode as subprocess gives it).
The server dies with its parent (PR_SET_PDEATHSIG); when the socket closes it kills every
process it started and leaves. It is a child subreaper, so nothing it started is orphaned.
"""

from __future__ import annotations

from trainer_lab.warm import fresh

fresh.capture()  # first, before any import installs a handler

import argparse  # noqa: E402
import contextlib  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pkgutil  # noqa: E402
import selectors  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from trainer_lab.procs import PARENT_ENV, become_subreaper, die_with_parent, kill_tree  # noqa: E402
from trainer_lab.warm.job import Job, fork_job  # noqa: E402

MAX_MESSAGE = 1 << 20
# What a rank, a driver or a checker imports at start or on its first step.
PRELOAD = (
    "torch",
    "torch.nn",
    "torch.optim",
    "torch._dynamo",
    "torch.distributed",
    "torch.distributed.run",
    "torch.distributed.launcher.api",
    "torch.distributed.elastic.multiprocessing",
    "torch.distributed.algorithms.join",
    "torch.distributed.fsdp",
    "torch.distributed.checkpoint",
    "torch.nn.parallel",
    "torch.utils.data",
    "trainer_lab.warm.agent",
    "trainer_lab.driver",
    "trainer_lab.train.worker",
    "trainer_lab.usercode.recorder",
    "trainer_lab.usercode.fswatch",
)
# Packages whose every submodule of these names is imported too (labs' workers and drivers,
# exercises' checkers).
PRELOAD_SUBMODULES = (
    ("trainer_lab.labs", ("worker", "drive")),
    ("trainer_lab.exercises", ("check",)),
)


def preload() -> list[str]:
    """Import what the processes will need; returns what could not be imported (kept going)."""
    missing: list[str] = []
    names = list(PRELOAD)
    for package_name, leaves in PRELOAD_SUBMODULES:
        with contextlib.suppress(ImportError):
            package = importlib.import_module(package_name)
            for info in pkgutil.iter_modules(package.__path__):
                names.extend(f"{package_name}.{info.name}.{leaf}" for leaf in leaves)
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as error:
            if error.name != name:  # a module that exists but failed to import
                missing.append(f"{name}: {error}")
        except Exception as error:
            missing.append(f"{name}: {type(error).__name__}: {error}")
    return missing


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


class Server:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.jobs: set[int] = set()

    def handle(self, data: bytes, fds: list[int]) -> None:
        try:
            request = json.loads(data)
            if len(fds) != 3:
                raise ValueError(f"expected 3 file descriptors, got {len(fds)}")
            job = Job(
                module=str(request["module"]),
                args=[str(a) for a in request["args"]],
                env={str(k): str(v) for k, v in dict(request["env"]).items()},
                cwd=request.get("cwd"),
                close_fds=[self.sock.fileno()],
            )
            pid = fork_job(job, *fds)
        except (ValueError, KeyError, TypeError, OSError) as error:
            _send(self.sock, {"id": _request_id(data), "error": f"{type(error).__name__}: {error}"})
            return
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.jobs.add(pid)
        _send(self.sock, {"id": request["id"], "pid": pid})

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.jobs:
                self.jobs.discard(pid)
                _send(self.sock, {"exit": pid, "returncode": os.waitstatus_to_exitcode(status)})

    def serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.sock, selectors.EVENT_READ)
        while True:
            if selector.select(timeout=0.02):
                data, fds, _flags, _addr = socket.recv_fds(self.sock, MAX_MESSAGE, 3)
                if not data:  # the client is gone: take everything we started with us
                    for pid in list(self.jobs):
                        kill_tree(pid)
                    return
                self.handle(data, fds)
            self.reap()


def _request_id(data: bytes) -> Any:
    with contextlib.suppress(ValueError, AttributeError):
        return json.loads(data).get("id")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainer_lab.warm.server")
    parser.add_argument("--fd", type=int, required=True, help="the SOCK_SEQPACKET socket's fd")
    args = parser.parse_args(argv)
    expected = os.environ.get(PARENT_ENV)
    die_with_parent(int(expected) if expected else None)
    become_subreaper()
    sock = socket.socket(fileno=args.fd)
    start = time.monotonic()
    missing = preload()
    fresh.capture_imports()
    for line in missing:
        print(f"warm launcher: preload: {line}", file=sys.stderr)
    _send(sock, {"ready": True, "pid": os.getpid(), "preload_s": time.monotonic() - start})
    Server(sock).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The caller's side of the warm server (torch-free): start it, ask it for processes, stop it.

    server = WarmServer.start()
    proc = server.spawn(Job("trainer_lab.driver", args, env, cwd), stdin, stdout, stderr)
    proc.wait(timeout=1.0)   # a RemoteProcess: pid, poll(), wait(), returncode, like a Popen
    server.close()           # kills the server and everything it started

A RemoteProcess is the server's child, not ours: `procs.supervise` and `kill_tree` still work on
it by pid (a /proc walk), and its exit status comes from the server. One server may run several
requests at once (the coding round grades phases in parallel threads).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from trainer_lab.containment import without_app_env
from trainer_lab.procs import PARENT_ENV, kill_tree
from trainer_lab.warm.job import Job

READY_TIMEOUT_S = 120.0  # the preload on a loaded machine; the first request waits for it
_MAX_MESSAGE = 1 << 20


class WarmServerError(RuntimeError):
    """The server could not start or died; the caller falls back to a cold start."""


class RemoteProcess:
    def __init__(self, server: WarmServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _set_ended(self, returncode: int) -> None:
        self.returncode = returncode
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired([str(self.pid)], timeout or 0.0)
        assert self.returncode is not None
        return self.returncode


class WarmServer:
    def __init__(
        self, proc: subprocess.Popen[bytes], sock: socket.socket, log: Any, keeper: threading.Thread
    ) -> None:
        self.proc = proc
        self._sock = sock
        self._log = log
        self._lock = threading.Lock()
        self._next_id = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._reply_ready = threading.Condition(self._lock)
        self._running: dict[int, RemoteProcess] = {}
        self._early_exits: dict[int, int] = {}
        self._ready = threading.Event()
        self._dead = False
        self.preload_s: float | None = None
        self._reader = keeper  # started the process; reads its messages (see start)

    @classmethod
    def start(cls, env: dict[str, str] | None = None) -> WarmServer:
        """Start the server from a thread of its own that lives as long as the server: the
        kernel's parent-death signal follows the thread that started a child, so a server
        started from a short-lived worker thread would die with that thread."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # without the app's variables: a rank is a fork of the server, and its
        # /proc/self/environ is the server's
        child_env = without_app_env(dict(os.environ if env is None else env))
        child_env[PARENT_ENV] = str(os.getpid())
        child_env["PYTHONUNBUFFERED"] = "1"
        log = tempfile.TemporaryFile(prefix="drill-warm-")  # noqa: SIM115 - kept for errors
        started: list[subprocess.Popen[bytes] | OSError] = []
        ready = threading.Event()
        holder: list[WarmServer] = []

        def keep() -> None:
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "trainer_lab.warm.server", "--fd", str(theirs.fileno())],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=child_env,
                    pass_fds=(theirs.fileno(),),
                    start_new_session=True,
                )
            except OSError as error:
                started.append(error)
                ready.set()
                return
            finally:
                theirs.close()
            started.append(proc)
            ready.set()
            holder_ready.wait()
            holder[0]._read()  # this thread reads the server's messages until it is gone

        holder_ready = threading.Event()
        keeper = threading.Thread(target=keep, name="warm-server", daemon=True)
        keeper.start()
        ready.wait()
        outcome = started[0]
        if isinstance(outcome, OSError):
            ours.close()
            log.close()
            raise WarmServerError(f"could not start the warm server: {outcome}")
        server = cls(outcome, ours, log, keeper)
        holder.append(server)
        holder_ready.set()
        return server

    # -- the reader thread ------------------------------------------------------------------------
    def _read(self) -> None:
        try:
            while True:
                data = self._sock.recv(_MAX_MESSAGE)
                if not data:
                    break
                self._dispatch(json.loads(data))
        except (OSError, ValueError):
            pass
        with self._lock:
            self._dead = True
            running = list(self._running.values())
            self._running.clear()
            self._reply_ready.notify_all()
        self._ready.set()
        for proc in running:  # the server died: so did its children (PDEATHSIG)
            proc._set_ended(-9)

    def _dispatch(self, message: dict[str, Any]) -> None:
        if message.get("ready"):
            self.preload_s = float(message.get("preload_s", 0.0))
            self._ready.set()
            return
        if "exit" in message:
            pid, code = int(message["exit"]), int(message["returncode"])
            with self._lock:
                proc = self._running.pop(pid, None)
                if proc is None:  # the exit overtook the spawn reply
                    self._early_exits[pid] = code
            if proc is not None:
                proc._set_ended(code)
            return
        with self._lock:
            self._replies[int(message["id"])] = message
            self._reply_ready.notify_all()

    # -- requests ---------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return not self._dead and self.proc.poll() is None

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        if not self._ready.wait(timeout_s):
            raise WarmServerError(f"the warm server was not ready after {timeout_s:.0f} s")
        if self._dead:
            raise WarmServerError(f"the warm server died: {self.log_tail()}")

    def spawn(self, job: Job, stdin: int, stdout: int, stderr: int) -> RemoteProcess:
        """Start job in the server; WarmServerError when the server cannot (the caller may then
        start the process cold)."""
        self.wait_ready()
        request = {"module": job.module, "args": job.args, "env": job.env, "cwd": job.cwd}
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
            payload = json.dumps({"id": request_id, **request}).encode()
            try:
                socket.send_fds(self._sock, [payload], [stdin, stdout, stderr])
            except OSError as error:
                raise WarmServerError(f"the warm server is gone: {error}") from None
            while request_id not in self._replies and not self._dead:
                self._reply_ready.wait()
            reply = self._replies.pop(request_id, None)
            if reply is None:
                raise WarmServerError(f"the warm server died: {self.log_tail()}")
            if "error" in reply:
                raise WarmServerError(f"the warm server refused {job.module}: {reply['error']}")
            proc = RemoteProcess(self, int(reply["pid"]))
            early = self._early_exits.pop(proc.pid, None)
            if early is None:
                self._running[proc.pid] = proc
        if early is not None:
            proc._set_ended(early)
        return proc

    def log_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0)
            lines = self._log.read().decode(errors="replace").strip().splitlines()
            return " | ".join(lines[-3:]) or "no output"
        return "no output"

    def close(self) -> None:
        """Kill the server and every process it started; wait until they are gone."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        if self.proc.poll() is None:
            kill_tree(self.proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(OSError):
            self._log.close()


_default: WarmServer | None = None
_default_lock = threading.Lock()
_default_failed_at: float | None = None
_exit_hook_set = False
RETRY_AFTER_S = 60.0  # after a failed start, cold starts for this long before trying again


def default_server() -> WarmServer | None:
    """This process's warm server, started on first use and reused; None when it cannot run
    (the caller starts the process cold)."""
    global _default, _default_failed_at, _exit_hook_set
    with _default_lock:
        if _default is not None and _default.alive:
            return _default
        if _default is not None:
            _default.close()
            _default = None
        if _default_failed_at is not None and time.monotonic() - _default_failed_at < RETRY_AFTER_S:
            return None
        try:
            _default = WarmServer.start()
        except WarmServerError:
            _default_failed_at = time.monotonic()
            return None
        if not _exit_hook_set:
            atexit.register(close_default_server)
            _exit_hook_set = True
        return _default


def close_default_server() -> None:
    """Stop this process's warm server (at exit, or when the app closes)."""
    global _default
    with _default_lock:
        server, _default = _default, None
    if server is not None:
        server.close()

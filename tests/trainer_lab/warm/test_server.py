"""The warm server as its client uses it: processes started on request with the caller's stdio,
environment and working directory, exit statuses passed back, and nothing left running when a
process is killed, the server is closed or its client dies (real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from trainer_lab.procs import descendants, is_alive, supervise, wait_gone
from trainer_lab.warm.client import WarmServer, WarmServerError, default_server
from trainer_lab.warm.job import Job

pytestmark = pytest.mark.lab


@pytest.fixture
def server() -> WarmServer:
    """This process's warm server (it outlives the test, as it outlives a lab in the app)."""
    started = default_server()
    assert started is not None
    started.wait_ready()
    return started


def driver_job(*args: str, cwd: Path | None = None, **env: str) -> Job:
    return Job("trainer_lab.driver", list(args), {**os.environ, **env}, str(cwd) if cwd else None)


def sleeper(tmp_path: Path) -> Job:
    script = tmp_path / "sleep.py"
    script.write_text("import os, time\nopen('started', 'w').close()\ntime.sleep(600)\n")
    observe = tmp_path / "observe"
    observe.mkdir(exist_ok=True)
    env = {**os.environ, "DRILL_OBSERVE_DIR": str(observe)}
    return Job("trainer_lab.usercode.bootstrap", [str(script)], env, str(tmp_path))


def spawn(server: WarmServer, job: Job, out: Path) -> object:
    with open(os.devnull, "rb") as devnull, out.open("wb") as log:
        return server.spawn(job, devnull.fileno(), log.fileno(), log.fileno())


def wait_for(path: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def test_a_module_runs_with_the_callers_stdio_and_exit_status(server, tmp_path):
    help_run = spawn(server, driver_job("--help"), tmp_path / "help.log")
    assert help_run.wait(timeout=60) == 0
    assert "usage: python -m trainer_lab.driver" in (tmp_path / "help.log").read_text()
    bad = spawn(server, driver_job("no-such-lab", "--out", str(tmp_path / "o")), tmp_path / "b")
    assert bad.wait(timeout=60) == 2
    assert "no-such-lab" in (tmp_path / "b").read_text()


def test_only_the_launchers_own_modules_run(server, tmp_path):
    with pytest.raises(WarmServerError, match="does not run 'os'"):
        spawn(server, Job("os", [], dict(os.environ)), tmp_path / "x.log")


def test_requests_from_several_threads_each_get_their_process(server, tmp_path):
    codes: list[int] = []

    def one(i: int) -> None:
        proc = spawn(server, driver_job("--help"), tmp_path / f"{i}.log")
        codes.append(proc.wait(timeout=60))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == [0, 0, 0, 0]


def test_a_deadline_kills_the_whole_tree_of_a_remote_process(server, tmp_path):
    proc = spawn(server, sleeper(tmp_path), tmp_path / "s.log")
    wait_for(tmp_path / "started")
    ended = supervise(proc, time.monotonic() + 0.5)  # type: ignore[arg-type]
    assert ended.stop == "timeout" and ended.returncode == -signal.SIGKILL
    assert not is_alive(proc.pid)  # type: ignore[attr-defined]


def test_closing_the_server_kills_what_it_started(tmp_path):
    server = WarmServer.start()
    proc = spawn(server, sleeper(tmp_path), tmp_path / "s.log")
    wait_for(tmp_path / "started")
    server_pid = server.proc.pid
    server.close()
    assert wait_gone([server_pid, proc.pid]) == []  # type: ignore[attr-defined]
    assert proc.wait(timeout=10) == -signal.SIGKILL  # type: ignore[attr-defined]


CLIENT = """
import os, sys, time
from pathlib import Path
from trainer_lab.warm.client import WarmServer
from trainer_lab.warm.job import Job
tmp = Path(sys.argv[1])
server = WarmServer.start()
env = {**os.environ, "DRILL_OBSERVE_DIR": str(tmp / "observe")}
job = Job("trainer_lab.usercode.bootstrap", [str(tmp / "sleep.py")], env, str(tmp))
with open(os.devnull, "rb") as devnull, open(tmp / "s.log", "wb") as log:
    proc = server.spawn(job, devnull.fileno(), log.fileno(), log.fileno())
print(server.proc.pid, proc.pid, flush=True)
time.sleep(600)
"""


def test_the_server_and_its_processes_die_with_the_client(tmp_path):
    sleeper(tmp_path)  # writes the script and the observe dir
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        server_pid, job_pid = (int(x) for x in client.stdout.readline().split())  # type: ignore[union-attr]
        wait_for(tmp_path / "started")
        client.kill()
        client.wait()
        assert wait_gone([server_pid, job_pid]) == []
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert not [p for p in descendants(os.getpid()) if p in (server_pid, job_pid)]


def test_a_server_started_from_a_short_lived_thread_outlives_the_thread(tmp_path):
    # PR_SET_PDEATHSIG follows the thread that started a child: the app starts its first lab
    # from a worker thread, and the server must stay for the next one.
    started: list[WarmServer] = []
    thread = threading.Thread(target=lambda: started.append(WarmServer.start()))
    thread.start()
    thread.join()
    server = started[0]
    try:
        server.wait_ready()
        proc = spawn(server, driver_job("--help"), tmp_path / "help.log")
        assert proc.wait(timeout=60) == 0
        assert server.alive
    finally:
        server.close()

"""Code that starts processes meant to outlive it, one of each way out of a process tree, and
records their pids: the containment tests run it as user code (its source is the script) and as
a plain module (`python -m tests.support.escaping_children DIR [EXIT_CODE]`).

Each kind appends `PID START-TIME` lines to DIR/pid-KIND (the start time tells a pid that was
reused by another process from the one recorded): `session` (start_new_session=True), `double` (a
double fork: fork, setsid, fork, the middle one exits), `daemon` (double forked, ignores SIGTERM,
SIGHUP, SIGINT and SIGUSR1), `hopper` (double forked, then forks again and again, each parent
exiting, so its pid keeps changing). It returns once every kind has recorded a pid.
"""

import os
import signal
import subprocess
import sys
import time

KINDS = ("session", "double", "daemon", "hopper")


def start_time(pid):
    """Field 22 of /proc/PID/stat (clock ticks after boot), None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    return int(text[text.rfind(")") + 2 :].split()[19])


def record(folder, kind, pid):
    with open(os.path.join(folder, f"pid-{kind}"), "a") as out:
        out.write(f"{pid} {start_time(pid)}\n")


def detach():
    """In a fork: leave the session, fork once more and let the middle process exit."""
    os.setsid()
    if os.fork() != 0:
        os._exit(0)


def start_all(folder):
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    record(folder, "session", subprocess.Popen(sleeper, start_new_session=True).pid)
    if os.fork() == 0:
        detach()
        record(folder, "double", os.getpid())
        time.sleep(600)
        os._exit(0)
    if os.fork() == 0:
        detach()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGUSR1):
            signal.signal(sig, signal.SIG_IGN)
        record(folder, "daemon", os.getpid())
        while True:
            time.sleep(1)
    if os.fork() == 0:
        detach()
        while True:
            record(folder, "hopper", os.getpid())
            if os.fork() != 0:
                os._exit(0)
            time.sleep(0.02)
    deadline = time.monotonic() + 30
    while not all(os.path.exists(os.path.join(folder, f"pid-{kind}")) for kind in KINDS):
        if time.monotonic() > deadline:
            sys.exit("the children did not start")
        time.sleep(0.02)


if __name__ == "__main__":
    start_all(sys.argv[1] if len(sys.argv) > 1 else ".")
    sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)

"""Launch a user's script with a deadline, faults and whole-tree kill (torch-free).

    plain:    python -m trainer_lab.usercode.bootstrap SCRIPT ARGS          (world_size 0)
    torchrun: python -m trainer_lab._torchrun --standalone --nproc-per-node W ... \
                  -m trainer_lab.usercode.bootstrap SCRIPT ARGS

The workspace is the cwd, CUDA is hidden (gloo on CPU), stdin is closed, every process dies with
its parent (PR_SET_PDEATHSIG) and limits.py caps memory, file size and process count in the
child. On deadline or cancel every rank is asked for a stack dump (SIGUSR1, faulthandler) so the
verdict can say where each rank was stuck, then the whole tree is frozen and SIGKILLed. Each
launch is contained (trainer_lab.containment: a cgroup where one can be made, and a keeping child
subreaper at its root): what the script starts in a new session or by a double fork ends with the
launch too, and after every launch the harness kills whatever is left in the cgroup.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trainer_lab.containment import Containment, without_app_env
from trainer_lab.files import read_regular
from trainer_lab.launcher import (
    RootCause,
    find_root_cause,
    rank_logs,
    read_failures,
    worker_env,
)
from trainer_lab.procs import descendants, reap, supervise, wait_gone
from trainer_lab.usercode import protocol
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.evidence import hang_summary, save_events, teardown_aborts
from trainer_lab.usercode.limits import LIMITS_TEXT
from trainer_lab.usercode.stall import Stall, StallWatch
from trainer_lab.warm.job import Job
from trainer_lab.warm.start import Mode, start_process

RunStatus = Literal["ok", "error", "timeout", "cancelled"]
# the root cause kind of a fault the launch injected on purpose (a kill, a torn save)
PLANNED = "planned"
STACK_WAIT_S = 1.5
# RLIMIT_NPROC does not bind root (CI and containers run as root), so the supervisor also counts
# the launch's session and stops it past this many processes: a fork bomb is an error in well
# under a second instead of filling the machine until the deadline.
MAX_SESSION_PROCS = 256
PROCESS_COUNT_EVERY_S = 0.2
PROCESS_LIMIT_CAUSE = f"process limit: more than {MAX_SESSION_PROCS} processes at once"


@dataclass(frozen=True)
class Faults:
    kill_rank: int | None = None
    kill_after_step: int | None = None
    tear_save_after_step: int | None = None
    # file-level tear (fswatch.py): the tear_write-th file written after step tear_write_after
    tear_write_after: int | None = None
    tear_write: int = 1
    tear_rank: int | None = None
    # preemption (sigterm.py): SIGTERM to every rank after step term_after_step, rank term_first
    # first, the others at their first action after step term_after_step + term_late_by;
    # term_again_during_save: a second one midway through the save that follows
    term_after_step: int | None = None
    term_first: int = 0
    term_again_during_save: bool = False
    term_late_by: int = 0

    def env(self) -> dict[str, str]:
        env: dict[str, str] = {}
        if self.term_after_step is not None:
            env[protocol.TERM_AFTER_ENV] = str(self.term_after_step)
            env[protocol.TERM_FIRST_ENV] = str(self.term_first)
            if self.term_again_during_save:
                env[protocol.TERM_AGAIN_ENV] = "1"
            if self.term_late_by:
                env[protocol.TERM_LATE_BY_ENV] = str(self.term_late_by)
        if self.tear_write_after is not None:
            env[protocol.TEAR_WRITE_AFTER_ENV] = str(self.tear_write_after)
            env[protocol.TEAR_WRITE_ENV] = str(self.tear_write)
            if self.tear_rank is not None:
                env[protocol.TEAR_RANK_ENV] = str(self.tear_rank)
        if self.kill_rank is not None and self.kill_after_step is not None:
            env[protocol.KILL_RANK_ENV] = str(self.kill_rank)
            env[protocol.KILL_AFTER_ENV] = str(self.kill_after_step)
        if self.tear_save_after_step is not None:
            env[protocol.TEAR_AFTER_ENV] = str(self.tear_save_after_step)
        return env


@dataclass(frozen=True)
class ScriptLaunch:
    name: str
    script: Path  # inside the workspace, which is the cwd
    args: tuple[str, ...]
    world_size: int  # 0: a plain `python SCRIPT` (no torchrun, no RANK)
    run_dir: Path
    ckpt_dir: Path
    timeout_s: float
    faults: Faults = Faults()
    data: DataPlan | None = None  # which values the given dataset serves (dataplan.py)
    # stopped as a hang once no rank makes progress (stall.py): for scripts that train, whose
    # steps, fetches and saves are progress (not the exercises' checkers)
    watch_progress: bool = False
    launcher: Mode | None = None  # warm or torchrun; None: trainer_lab.warm.start's default
    extra_env: tuple[tuple[str, str], ...] = ()  # e.g. the probes a grading asks for


@dataclass
class ScriptRun:
    launch: ScriptLaunch
    status: RunStatus
    returncode: int | None
    duration_s: float
    root_cause: RootCause | None = None
    hangs: dict[int, str] = field(default_factory=dict)  # rank -> where it was stuck
    notes: list[str] = field(default_factory=list)  # e.g. an abort in the runtime's teardown
    stall: Stall | None = None  # stopped by the stall watchdog (status "timeout")

    @property
    def run_dir(self) -> Path:
        return self.launch.run_dir

    @property
    def observe_dir(self) -> Path:
        return self.launch.run_dir / protocol.OBSERVE_DIR

    def ranks(self) -> list[int]:
        return list(range(max(self.launch.world_size, 1)))

    def stdout_path(self, rank: int) -> Path:
        if self.launch.world_size == 0:
            return self.run_dir / "stdout.log"
        return rank_logs(self.run_dir).get(rank, {}).get("stdout", self.run_dir / "missing")

    def stderr_path(self, rank: int) -> Path:
        if self.launch.world_size == 0:
            return self.run_dir / "stderr.log"
        return rank_logs(self.run_dir).get(rank, {}).get("stderr", self.run_dir / "missing")

    def summary(self) -> str:
        """One line: how the run ended."""
        if self.status == "ok":
            note = f" ({'; '.join(self.notes)})" if self.notes else ""
            return f"exit 0 in {self.duration_s:.1f} s{note}"
        if self.status == "timeout":
            where = "; ".join(f"rank {r}: {w}" for r, w in sorted(self.hangs.items()))
            if self.stall is not None:
                # no "likely cause: " here: the graders embed this line inside check details and
                # read everything after that phrase as causes (they list run.stall's themselves)
                stall = self.stall
                text = f"hang: {stall.observed()}, killed after {self.duration_s:.0f} s"
                text = f"{text} ({where})" if where else text
                return f"{text}; {stall.expected()}; probably {stall.likely_cause()}"
            text = f"deadline: killed after {self.launch.timeout_s:.0f} s"
            return f"{text} ({where})" if where else text
        if self.root_cause is not None and self.root_cause.kind == PLANNED:
            return str(self.root_cause)  # the fault the grader injected: no error of the script
        cause = str(self.root_cause) if self.root_cause else f"exit {self.returncode}"
        return f"{self.status}: {cause}{limit_hint(cause)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.launch.name,
            "world_size": self.launch.world_size,
            "args": list(self.launch.args),
            "status": self.status,
            "returncode": self.returncode,
            "duration_s": round(self.duration_s, 3),
            "run_dir": str(self.run_dir),
            "summary": self.summary(),
            "root_cause": self.root_cause.to_dict() if self.root_cause else None,
            "hangs": {str(k): v for k, v in self.hangs.items()},
            "notes": list(self.notes),
        }


_HINTS = (
    ("MemoryError", "the address-space limit"),
    ("File too large", "the file-size limit (stdout included)"),
    ("SIGXFSZ", "the file-size limit (stdout included)"),
    ("Resource temporarily unavailable", "the process limit"),
    ("process limit:", "the process limit"),
)


def limit_hint(cause: str) -> str:
    for needle, hint in _HINTS:
        if needle in cause:
            return f" [hit {hint}: {LIMITS_TEXT}]"
    return ""


def command(launch: ScriptLaunch) -> list[str]:
    user = ["-m", "trainer_lab.usercode.bootstrap", str(launch.script), *launch.args]
    if launch.world_size == 0:
        return [sys.executable, *user]
    return [
        sys.executable,
        "-m",
        "trainer_lab._torchrun",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        str(launch.world_size),
        "--max-restarts",
        "0",
        "--monitor-interval",
        "0.05",
        "--log-dir",
        str(launch.run_dir / "logs"),
        "--redirects",
        "3",
        *user,
    ]


def child_env(launch: ScriptLaunch) -> dict[str, str]:
    extra = {
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONDONTWRITEBYTECODE": "1",
        protocol.OBSERVE_ENV: str(launch.run_dir / protocol.OBSERVE_DIR),
        protocol.CKPT_ENV: str(launch.ckpt_dir),
        **launch.faults.env(),
        **dict(launch.extra_env),
    }
    if launch.data is not None:
        extra[protocol.DATA_ENV] = launch.data.to_env()
    # The app's data is not handed to the script: none of its variables (DRILL_HOME, XDG dirs),
    # and a home of its own (the workspace), so where the app keeps its data by default resolves
    # inside the workspace. The protocol's own variables come after.
    env = without_app_env(worker_env())
    env.update(extra)
    env["HOME"] = str(launch.script.parent)
    return env


def _dump_stacks(launch: ScriptLaunch, root: int) -> None:
    """SIGUSR1 to every bootstrap process (their faulthandler writes all threads' stacks)."""
    observe = launch.run_dir / protocol.OBSERVE_DIR
    tree = set(descendants(root)) | {root}
    asked = []
    for path in observe.glob("pid-rank*-*"):
        try:
            pid = int(read_regular(path, 64))
        except (OSError, ValueError):
            continue
        if pid in tree:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGUSR1)
                asked.append(pid)
    deadline = time.monotonic() + STACK_WAIT_S
    while asked and time.monotonic() < deadline:
        sizes = [(observe / f).stat().st_size for f in os.listdir(observe) if f.startswith("stack")]
        if sum(1 for s in sizes if s > 0) >= len(asked):
            break
        time.sleep(0.05)


def session_members(sid: int) -> list[int]:
    """Live processes in session `sid`: they outlive their parents (a fork bomb's orphans are
    reparented away from our tree) but keep the session the launch started."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) > 3 and fields[3] == str(sid) and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


def sweep_session(sid: int) -> list[int]:
    """SIGKILL (after SIGSTOP) every process left in the session, until none is left."""
    killed: list[int] = []
    for _ in range(50):
        left = [pid for pid in session_members(sid) if pid not in killed]
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.extend(left)
    wait_gone(killed)
    return killed


def run_script(launch: ScriptLaunch, cancel: threading.Event | None = None) -> ScriptRun:
    """Run the script once; never outlives launch.timeout_s (plus the stack dump)."""
    launch.run_dir.mkdir(parents=True, exist_ok=True)
    launch.ckpt_dir.mkdir(parents=True, exist_ok=True)
    (launch.run_dir / protocol.OBSERVE_DIR).mkdir(exist_ok=True)
    plain = launch.world_size == 0
    out_name = "stdout.log" if plain else "torchrun.log"
    start = time.monotonic()
    box = Containment.create()
    try:
        with (
            (launch.run_dir / out_name).open("wb") as out,
            (launch.run_dir / "stderr.log").open("wb") as err,
        ):
            argv = command(launch)
            env = {**child_env(launch), **box.env()}
            job = Job(argv[2], argv[3:], env, str(launch.script.parent))
            proc = start_process(
                job, out.fileno(), err.fileno() if plain else None, mode=launch.launcher
            )
            watchdog = _ProcessWatchdog(proc.pid, cancel, launch, box)
            ended = supervise(
                proc,
                start + launch.timeout_s,
                watchdog.stop,
                on_poll=watchdog.poll,
                on_timeout=lambda: _dump_stacks(launch, proc.pid),
            )
        for pid in sweep_session(proc.pid):
            reap(pid)
    finally:
        box.close()  # nothing the launch started outlives it, whatever its session or parent
    duration = time.monotonic() - start
    if watchdog.over_limit:
        run = ScriptRun(launch, "error", proc.returncode, duration)
        run.root_cause = RootCause(None, "signal", PROCESS_LIMIT_CAUSE)
        return run
    final: RunStatus = ended.stop or ("ok" if proc.returncode == 0 else "error")
    if watchdog.stalled is not None:  # a hang, stopped like one at its deadline (stacks dumped)
        final = "timeout"
    run = ScriptRun(launch, final, proc.returncode, duration, stall=watchdog.stalled)
    if final == "timeout":
        run.hangs = hang_summary(run.observe_dir, launch.script)
    if final == "error":
        teardown = teardown_aborts(run.observe_dir, run.ranks())
        if teardown is not None:
            run.status, run.notes = "ok", [teardown]
            return run
    if final != "ok":
        run.root_cause = _root_cause(run)
    return run


class _ProcessWatchdog:
    """Stops the launch on the caller's cancel, once its session holds too many processes, or
    (launch.watch_progress) once no rank made progress for a while: then, as at the deadline,
    every rank is first asked for its stacks."""

    def __init__(
        self,
        sid: int,
        cancel: threading.Event | None,
        launch: ScriptLaunch,
        box: Containment | None = None,
    ) -> None:
        self.sid = sid
        self.box = box or Containment()
        self.cancel = cancel
        self.launch = launch
        self.stop = threading.Event()
        self.over_limit = False
        self._next_count = 0.0
        self.stall_watch: StallWatch | None = None
        if launch.watch_progress:
            observe = launch.run_dir / protocol.OBSERVE_DIR
            self.stall_watch = StallWatch(observe, launch.world_size)
        self.stalled: Stall | None = None

    def poll(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            self.stop.set()
        if self.stall_watch is not None and not self.stop.is_set():
            stalled = self.stall_watch.poll()
            if stalled is not None:
                _dump_stacks(self.launch, self.sid)
                self.stalled = stalled
                self.stop.set()
                return
        now = time.monotonic()
        if now < self._next_count:
            return
        self._next_count = now + PROCESS_COUNT_EVERY_S
        # the cgroup also counts what left the session
        if len(set(session_members(self.sid)) | set(self.box.members())) > MAX_SESSION_PROCS:
            self.over_limit = True
            self.stop.set()


def _injected(run: ScriptRun) -> RootCause | None:
    """The fault this launch injected, when it fired (it is then the root cause)."""
    for event in save_events(run.observe_dir, run.ranks()):
        if event["event"] == "killed":
            step = event.get("pstep")
            return RootCause(event["rank"], PLANNED, f"SIGKILLed as planned after step {step}")
        if event["event"] == "torn":
            path, step = event.get("path"), event.get("pstep")
            return RootCause(
                event["rank"], PLANNED, f"SIGKILLed as planned while saving {path} (step {step})"
            )
    return None


def _root_cause(run: ScriptRun) -> RootCause:
    injected = _injected(run)
    if injected is not None:
        return injected
    if run.stall is not None:
        return RootCause(None, "hang", run.stall.text())
    failures = read_failures(run.run_dir)
    launch = run.launch
    if launch.world_size > 0:
        return find_root_cause(
            run.run_dir, failures, run.status, launch.timeout_s, launch.world_size
        )
    if failures:
        first = failures[0]
        return RootCause(0, "exception", f"{first['type']}: {first['message']}", first["traceback"])
    code = run.returncode
    if run.status in ("timeout", "cancelled"):
        return RootCause(None, "hang", f"deadline after {launch.timeout_s:.0f} s")
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else code
        return RootCause(0, "signal", f"killed by signal {name}")
    return RootCause(0, "exit", f"exited with code {code}")

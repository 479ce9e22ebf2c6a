"""replica-recovery worker (imports torch): every torchrun rank supervises one replica process.

torchrun (or the warm launcher) starts W ranks once. Rank r is the supervisor of replica r, the
role a replica group's own torchrun agent plays in torchft: it starts the replica as a child
process (fork on CPU; spawn where the rank holds a CUDA context), and starts a new one when the
old one is gone. Rank 0 also hosts the TCPStore every replica talks through and runs the
lighthouse (a thread): it answers each step's quorum ask (rule: quorum.py).

Two modes, one after the other, each with its own store prefix and checkpoint folder:
- live: the victim replica (W-1) is SIGKILLed by its supervisor in step kill_after_step + 1. The
  survivors' all-reduce raises, they ask again; once the victim's heartbeat is stale the
  lighthouse answers with a smaller quorum and they retry the same step there. When the quorum
  reaches step kill_after_step + shrunk_steps the lighthouse tells the victim's supervisor that a
  spare is ready (the lab's fault schedule) and waits for the replacement it knows is starting
  (torchft's join wait); the replacement recovers weights and momentum from a peer.
- restart: the same kill, but a collective error is fatal: every replica exits and its
  supervisor starts a new process from the last disk checkpoint (what a whole-job restart does).
Afterwards rank 0 replays the live run in one process (reference.py) for the reference checks.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.events import EventWriter
from trainer_lab.labs.replica_recovery import MODES
from trainer_lab.labs.replica_recovery.quorum import Ask, Member, form, missing, ready
from trainer_lab.labs.replica_recovery.reference import analyse
from trainer_lab.labs.replica_recovery.replica import FATAL_EXIT, replica_main
from trainer_lab.train.worker import WorkerContext

POLL_S = 0.02  # how often the lighthouse and the supervisors look at the store and children


class Lighthouse(threading.Thread):
    """Answers quorum asks for one mode; heartbeats decide who is alive."""

    def __init__(self, cfg: dict[str, Any], events: EventWriter) -> None:
        super().__init__(daemon=True)
        spec, self.cfg, self.events = cfg["spec"], cfg, events
        self.store = dist.PrefixStore(cfg["mode"], _client(cfg))
        self.replicas = spec["replicas"]
        self.hb_timeout = spec["heartbeat_timeout_s"]
        self.restart_all = cfg["mode"] == "restart"
        self.spare_at = spec["kill_after_step"] + spec["shrunk_steps"]
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._serve()
        except BaseException as error:  # reported by the supervisor thread
            self.error = error

    def _serve(self) -> None:
        pending: dict[int, Ask] = {}
        beats: dict[int, tuple[int, str, float]] = {}  # rid -> (pid, last value, when it moved)
        previous: tuple[Member, ...] = ()
        epoch, number = -1, 1
        expected: set[int] = set()
        expected_since, spare_sent = 0.0, False
        while not self.stop.wait(POLL_S):
            while self.store.check([f"ask/{number}"]):
                ask = Ask(**json.loads(self.store.get(f"ask/{number}")))
                pending[ask.rid] = ask
                number += 1
            now = time.monotonic()
            for rid in range(self.replicas):
                key = f"hb/{rid}"
                if self.store.check([key]):
                    value = self.store.get(key).decode()
                    if rid not in beats or beats[rid][1] != value:
                        beats[rid] = (int(value.split(":")[0]), value, now)
            alive = {(rid, b[0]) for rid, b in beats.items() if now - b[2] < self.hb_timeout}
            minimum = self.replicas if self.restart_all or not previous else 1
            if expected and now - expected_since > self.cfg["spec"]["join_timeout_s"]:
                self.events.write("join_timeout", rids=sorted(expected))
                expected.clear()
            asks = ready(previous, pending, alive, minimum, expected)
            if asks is None:
                continue
            members = tuple(a.member for a in asks)
            gone = missing(members, self.replicas)
            step = max(a.step for a in asks)
            if not self.restart_all and gone and not spare_sent and step >= self.spare_at:
                for rid in gone:  # the fault schedule: a spare host is ready now
                    self.store.set(f"spare/{rid}", "1")
                expected, expected_since, spare_sent = set(gone), now, True
                self.events.write("spare_ready", rids=gone, step=step)
                continue
            quorum = form(asks, previous, epoch)
            for ask in asks:
                answer = {**quorum.to_dict(), "rank": quorum.rank_of(ask.rid)}
                self.store.set(f"ans/{ask.rid}/{ask.pid}/{ask.seq}", json.dumps(answer))
                del pending[ask.rid]
            if quorum.epoch != epoch:
                self.events.write(
                    "quorum",
                    mode=self.cfg["mode"],
                    epoch=quorum.epoch,
                    members=[r for r, _ in quorum.members],
                    pids=[p for _, p in quorum.members],
                    step=quorum.max_step,
                    lagging=list(quorum.lagging),
                    src=quorum.src,
                )
            previous, epoch = quorum.members, quorum.epoch
            expected -= {a.rid for a in asks}


def _client(cfg: dict[str, Any]) -> Any:
    timeout = timedelta(seconds=cfg["spec"]["quorum_timeout_s"])
    return dist.TCPStore(cfg["host"], cfg["port"], is_master=False, timeout=timeout)


class Child:
    """One replica process: forked on CPU (torch is already imported: no start-up cost), a
    fresh `python -m ...replica` where the rank holds a CUDA context (a fork could not use it,
    and multiprocessing's spawn would re-run the rank's own __main__)."""

    def __init__(self, cfg: dict[str, Any], inc: int, init: str, events: EventWriter) -> None:
        child_cfg = {**cfg, "inc": inc, "init": init, "parent": os.getpid()}
        if cfg["device"] == "cpu":
            self.proc: Any = multiprocessing.get_context("fork").Process(
                target=replica_main, args=(child_cfg,), daemon=True
            )
            self.proc.start()
        else:
            root = str(Path(__file__).resolve().parents[3])
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
            }
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "trainer_lab.labs.replica_recovery.replica",
                    json.dumps(child_cfg),
                ],
                env=env,
            )
        self.pid = self.proc.pid
        events.write("spawned", mode=cfg["mode"], rid=cfg["rid"], inc=inc, pid=self.pid, init=init)

    def poll(self) -> int | None:
        """The exit code once it ended (negative: killed by that signal), else None."""
        if isinstance(self.proc, subprocess.Popen):
            return self.proc.poll()
        return self.proc.exitcode

    def kill(self) -> int | None:
        os.kill(self.pid, signal.SIGKILL)
        if isinstance(self.proc, subprocess.Popen):
            return self.proc.wait()
        self.proc.join()
        return self.proc.exitcode


def supervise(
    cfg: dict[str, Any], events: EventWriter, lighthouse: Lighthouse | None = None
) -> None:
    """Run this rank's replica for one mode: restart it when it exits with FATAL_EXIT, kill it
    at the fault point (victim only), start its replacement when told a spare is ready. Rank 0
    also watches its lighthouse thread: an error there ends the run with that error."""
    store = dist.PrefixStore(cfg["mode"], _client(cfg))
    spec, rid = cfg["spec"], cfg["rid"]
    inc, killed = 0, False
    proc = Child(cfg, inc, "fresh", events)
    deadline = time.monotonic() + spec["mode_timeout_s"]
    tick = threading.Event()
    while True:
        if time.monotonic() > deadline:
            proc.kill()
            raise TimeoutError(f"{cfg['mode']}: replica {rid} did not finish in time")
        if lighthouse is not None and lighthouse.error is not None:
            proc.kill()
            raise lighthouse.error
        code = proc.poll()
        if code is not None:
            events.write("exited", mode=cfg["mode"], rid=rid, inc=inc, pid=proc.pid, code=code)
            if code == 0:
                return
            if code != FATAL_EXIT:
                raise RuntimeError(
                    f"{cfg['mode']}: replica {rid} (pid {proc.pid}) exited with code {code}; its "
                    f"events: {cfg['run_dir']}/replicas/{cfg['mode']}/r{rid}-i{inc}"
                )
            inc += 1
            proc = Child(cfg, inc, "disk", events)
            continue
        if rid == cfg["victim"] and not killed and store.check(["kill_me"]):
            code = proc.kill()
            killed = True
            events.write("killed", mode=cfg["mode"], rid=rid, pid=proc.pid, code=code)
            if cfg["mode"] == "live":  # the replacement waits for a spare host
                store.wait([f"spare/{rid}"], timedelta(seconds=spec["mode_timeout_s"]))
            inc += 1
            proc = Child(cfg, inc, "peer" if cfg["mode"] == "live" else "disk", events)
            continue
        tick.wait(POLL_S)


def _store_address(ctx: WorkerContext) -> tuple[Any, list[Any]]:
    """Rank 0 hosts a TCPStore on a free port; every rank learns (host, port)."""
    server = None
    address: list[Any] = [None, None]
    if ctx.rank == 0:
        single = int(os.environ.get("LOCAL_WORLD_SIZE", ctx.world_size)) == ctx.world_size
        host = "127.0.0.1" if single else socket.getfqdn()
        server = dist.TCPStore(
            host, 0, is_master=True, wait_for_workers=False, timeout=timedelta(seconds=60)
        )
        address = [host, server.port]
    dist.broadcast_object_list(address, src=0)
    return server, address


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    torch.set_num_threads(1)
    server, (host, port) = _store_address(ctx)
    events = ctx.events()
    run_dir = Path(ctx.run_dir)
    for mode in MODES:
        on_error = "exit" if mode == "restart" or spec["sabotage"] == "fatal_errors" else "retry"
        cfg = {
            "mode": mode,
            "rid": ctx.rank,
            "victim": ctx.world_size - 1,
            "host": host,
            "port": port,
            "device": str(ctx.device),
            "run_dir": str(run_dir),
            "on_error": on_error,
            "spec": {**spec, "replicas": ctx.world_size},
        }
        lighthouse = None
        if ctx.rank == 0:
            lighthouse = Lighthouse(cfg, EventWriter(run_dir / "lighthouse" / mode, 0))
            lighthouse.start()
        supervise(cfg, events, lighthouse)
        dist.barrier()
        if lighthouse is not None:
            lighthouse.stop.set()
            lighthouse.join()
            lighthouse.events.close()
            if lighthouse.error is not None:
                raise lighthouse.error
    if ctx.rank == 0:
        found = analyse(run_dir, {**spec, "replicas": ctx.world_size}, ctx.device)
        events.write("replica_recovery", **found)
    del server

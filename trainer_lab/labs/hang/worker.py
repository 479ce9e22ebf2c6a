"""hang worker (imports torch): a loop of all-reduces where one rank (the victim) misbehaves
at step K, in one of four ways.

- skip: the victim skips the all-reduce of step K and then stays alive but stuck (as a rank
  stuck in its data loader would); its peers wait in the all-reduce until the timeout.
- mismatch: the victim all-reduces a tensor of another shape at step K.
- dead-rank: the victim raises at step K (a crash with a traceback) and its process exits,
  or (death=sigkill) is SIGKILLed, leaving no traceback at all; debug death=thread: the
  exception ends only a background thread, the process lives on waiting for it (as a main
  loop waiting on a dead loader thread would), so the survivors only see a timeout.
- straggler: at step K every rank calls monitored_barrier; the victim arrives late.

Every rank writes an `enter` event before each collective, so the driver can time the failure
from the moment the survivors entered the step-K collective. In the skip scenario every rank
also runs a heartbeat thread (as a liveness probe would): it keeps logging while the main
thread waits in the collective, with the last completed step.
"""

from __future__ import annotations

import os
import signal
import threading
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.train.worker import WorkerContext

SHAPE = 8


def _die_in_a_thread(rank: int, step: int) -> None:
    def crash() -> None:
        raise RuntimeError(f"simulated fault in a background thread of rank {rank} at step {step}")

    thread = threading.Thread(target=crash, name="loader")
    thread.start()
    thread.join()  # threading's excepthook prints the traceback to stderr; the process lives


def _start_heartbeat(ctx: WorkerContext, interval_s: float, done: list[int]) -> None:
    """A daemon thread that logs a heartbeat with the last completed step every interval."""
    events = ctx.events()

    def beat() -> None:
        tick = threading.Event()
        while not tick.wait(interval_s):  # the interval is the probe's period, not a sync
            events.write("heartbeat", last_step=done[-1])

    threading.Thread(target=beat, name="heartbeat", daemon=True).start()


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    scenario = spec["scenario"]
    victim = int(spec["victim"])
    fault_step = int(spec["fault_step"])
    events = ctx.events()
    is_victim = ctx.rank == victim
    completed = [-1]  # last step whose collective returned, read by the heartbeat thread
    if spec.get("heartbeat_s"):
        _start_heartbeat(ctx, float(spec["heartbeat_s"]), completed)
    # monitored_barrier is implemented for gloo only; NCCL jobs use a gloo side group.
    side = dist.new_group(backend="gloo") if ctx.backend != "gloo" else None
    for step in range(int(spec["steps"])):
        at_fault = step == fault_step
        if scenario == "straggler" and at_fault:
            if is_victim:
                events.write("late", step=step, delay_s=spec["straggler_delay_s"])
                # The straggler's delay is the behaviour under test, not synchronisation.
                threading.Event().wait(float(spec["straggler_delay_s"]))
            events.write(
                "enter", step=step, op="monitored_barrier" if spec["monitored"] else "barrier"
            )
            if spec["monitored"]:
                dist.monitored_barrier(
                    group=side,
                    timeout=timedelta(seconds=float(spec["barrier_timeout_s"])),
                    wait_all_ranks=True,
                )
            else:
                dist.barrier()
            continue
        if at_fault and is_victim and scenario == "skip":
            events.write("skip", step=step)
            # Alive but never reaching the collective; torchrun kills it once a peer fails.
            threading.Event().wait(float(spec["stuck_s"]))
            return
        if at_fault and is_victim and scenario == "dead-rank":
            events.write("crash", step=step, death=spec["death"])
            if spec["death"] == "sigkill":  # as the OOM killer would: no traceback, no record
                os.kill(os.getpid(), signal.SIGKILL)
            if spec["death"] == "thread":
                _die_in_a_thread(ctx.rank, step)
                # The main loop waits for a result the dead thread never delivers.
                threading.Event().wait(float(spec["stuck_s"]))
                return
            raise RuntimeError(f"simulated fault on rank {ctx.rank} at step {step}")
        mismatched = at_fault and is_victim and scenario == "mismatch"
        size = SHAPE // 2 if mismatched and spec["mismatch"] == "shape" else SHAPE
        tensor = torch.full((size,), float(ctx.rank + 1), device=ctx.device)
        if mismatched and spec["mismatch"] == "op":
            events.write("enter", step=step, op="broadcast", shape=[size])
            dist.broadcast(tensor, src=0)
        else:
            events.write("enter", step=step, op="all_reduce", shape=[size])
            dist.all_reduce(tensor)
        events.write("done", step=step, value=tensor[0].item())
        completed.append(step)
    events.write("finished")

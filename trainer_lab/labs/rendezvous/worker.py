"""rendezvous worker (imports torch): open a second TCPStore rendezvous among the ranks and
break it on purpose; every rank reports what it saw (error, message, seconds)."""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from typing import Any

import torch.distributed as dist

from trainer_lab.train.worker import WorkerContext

HOST = "127.0.0.1"


def free_port() -> int:
    """A port nobody listens on right now (bound, then released)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def classify(message: str) -> str:
    if "EADDRINUSE" in message or "address already in use" in message:
        return "address_in_use"
    if "timed out" in message.lower():
        return "timeout"
    return "other"


def attempt(make: Any) -> dict[str, Any]:
    start = time.monotonic()
    try:
        store = make()
    except Exception as error:  # the store's own errors are what the lab observes
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return {
            "error": classify(first),
            "message": first[:300],
            "seconds": time.monotonic() - start,
        }
    del store
    return {"error": "none", "message": "", "seconds": time.monotonic() - start}


def store(port: int, world: int, master: bool, timeout: timedelta) -> Any:
    """As init_process_group's env:// rendezvous builds it: every rank counts itself in and
    waits for the others (wait_for_workers)."""
    return lambda: dist.TCPStore(HOST, port, world, master, timeout=timeout, wait_for_workers=True)


def shared_ports(ctx: WorkerContext) -> list[int]:
    ports = [free_port(), free_port(), free_port(), free_port()] if ctx.rank == 0 else [0] * 4
    dist.broadcast_object_list(ports, src=0)
    return ports


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    sabotage = spec["sabotage"]
    timeout = timedelta(seconds=float(spec["rdzv_timeout_s"]))
    rank, world = ctx.rank, ctx.world_size
    victim = world - 1
    missing_port, wrong_port_master, dead_port, held_port = shared_ports(ctx)
    seen: dict[str, dict[str, Any]] = {}

    # 1. the last rank never joins
    if rank == 0:
        seen["missing"] = attempt(store(missing_port, world, True, timeout))
    elif rank != victim or sabotage == "victim_joins":
        seen["missing"] = attempt(store(missing_port, world, False, timeout))
    else:
        seen["missing"] = {"error": "absent", "message": "", "seconds": 0.0}
    dist.barrier()

    # 2. the last rank dials a port nobody listens on (a wrong MASTER_ADDR/PORT)
    if rank == 0:
        seen["wrong_address"] = attempt(store(wrong_port_master, world, True, timeout))
    else:
        port = dead_port if rank == victim and sabotage != "right_address" else wrong_port_master
        seen["wrong_address"] = attempt(store(port, world, False, timeout))
    dist.barrier()

    # 3. a second master on a port that a first one holds (a stale job, two jobs one port)
    if rank == 0:
        first = dist.TCPStore(HOST, held_port, 1, True, timeout=timeout)
        port = free_port() if sabotage == "free_port" else held_port
        seen["port_in_use"] = attempt(store(port, 1, True, timeout))
        del first
    per_rank: list[Any] = [None] * world
    dist.all_gather_object(per_rank, seen)
    if rank == 0:
        ctx.events().write("rendezvous", ranks=per_rank, victim=victim)

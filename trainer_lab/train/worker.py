"""Generic torchrun entry point for lab workers (imports torch).

    torchrun ... -m trainer_lab.train.worker --task trainer_lab.labs.resume.worker:main \
        --spec SPEC.json

Sets PR_SET_PDEATHSIG before anything else, initialises the process group (gloo on CPU, NCCL
with one process per GPU when CUDA is present) with a short collective timeout, runs the task
function `task(ctx: WorkerContext, spec: dict) -> None`, and on failure writes
failures/rank{R}.json (precise time + traceback) next to torchelastic's error file, so the
launcher can name the first failing rank.
"""

from __future__ import annotations

import os

from trainer_lab.procs import PARENT_ENV, die_with_parent

# First thing, before the slow torch import: torchrun may die while we load. torchrun (through
# trainer_lab._torchrun) tells us its pid, so a worker already orphaned exits at once.
die_with_parent(int(os.environ[PARENT_ENV]) if PARENT_ENV in os.environ else None)

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import timedelta  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.elastic.multiprocessing.errors import record  # noqa: E402

from trainer_lab.events import EventWriter  # noqa: E402
from trainer_lab.result import FAILURES_DIR, failure_file  # noqa: E402


@dataclass
class WorkerContext:
    rank: int
    world_size: int
    local_rank: int
    backend: str
    device: torch.device
    run_dir: Path
    restart_count: int = 0
    _writers: dict[Path, EventWriter] = field(default_factory=dict)

    def events(self, run_dir: Path | None = None) -> EventWriter:
        """The events-rank{R}.jsonl writer of a run dir (default: the launch's run dir)."""
        target = run_dir or self.run_dir
        if target not in self._writers:
            self._writers[target] = EventWriter(target, self.rank)
        return self._writers[target]

    def log(self, message: str, all_ranks: bool = False) -> None:
        """Rank-aware console log: rank 0 concise, others only when asked."""
        if self.rank == 0 or all_ranks:
            print(f"[rank {self.rank}] {message}", flush=True)

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()


def init_distributed(run_dir: Path, timeout_s: float) -> WorkerContext:
    rank = int(os.environ.get("RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", str(world_size)))
    use_cuda = torch.cuda.is_available() and torch.cuda.device_count() >= local_world
    if use_cuda:
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    if world_size > 1 or "MASTER_ADDR" in os.environ:
        kwargs: dict[str, Any] = {"timeout": timedelta(seconds=timeout_s)}
        if use_cuda:
            kwargs["device_id"] = device
        dist.init_process_group(backend=backend, **kwargs)
    return WorkerContext(
        rank=rank,
        world_size=world_size,
        local_rank=local_rank,
        backend=backend,
        device=device,
        run_dir=run_dir,
        restart_count=int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")),
    )


def write_failure(run_dir: Path, rank: int, error: BaseException) -> None:
    folder = run_dir / FAILURES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "rank": rank,
        "time": time.time(),
        "type": type(error).__name__,
        "message": str(error).strip().splitlines()[0] if str(error).strip() else "",
        "traceback": "".join(traceback.format_exception(error)),
        "restart_count": int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")),
    }
    tmp = folder / f".rank{rank}.json.tmp"
    tmp.write_text(json.dumps(payload))
    tmp.replace(run_dir / failure_file(rank))


def resolve_task(text: str) -> Callable[[WorkerContext, dict[str, Any]], None]:
    module_name, _, func_name = text.partition(":")
    return getattr(importlib.import_module(module_name), func_name or "main")


@record
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task", required=True, help="module:function of the worker task")
    parser.add_argument("--spec", required=True, type=Path, help="JSON spec file")
    args = parser.parse_args(argv)
    spec = json.loads(args.spec.read_text())
    run_dir = Path(spec["run_dir"])
    rank = int(os.environ.get("RANK", "0"))
    ctx: WorkerContext | None = None
    try:
        ctx = init_distributed(run_dir, float(spec.get("collective_timeout_s", 30.0)))
        if ctx.rank == 0:
            ctx.events().write(
                "worker_start",
                backend=ctx.backend,
                device=str(ctx.device),
                world_size=ctx.world_size,
                torch=torch.__version__,
                restart_count=ctx.restart_count,
            )
        resolve_task(args.task)(ctx, spec)
    except BaseException as error:
        write_failure(run_dir, rank, error)
        raise
    finally:
        if ctx is not None:
            ctx.close()
    if dist.is_initialized():
        leave_group(rank, float(spec.get("collective_timeout_s", 30.0)))


def leave_group(rank: int, timeout_s: float) -> None:
    """Wait for every rank, then destroy the group. Destroying it while a peer's last gloo
    collective was still in flight made a rank abort now and then ("terminate called without
    an active exception") after a run that had succeeded."""
    try:
        if dist.get_backend() == "gloo":
            dist.monitored_barrier(timeout=timedelta(seconds=timeout_s))
        else:
            dist.barrier()
    except RuntimeError as error:  # a peer failed or left: the job's failure is reported there
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"rank {rank}: final barrier not reached by all ranks: {first_line}", file=sys.stderr)
        return
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])

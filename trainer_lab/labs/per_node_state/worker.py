"""Run by torchrun on every node of the per-node-state lab (imports torch).

Each process writes what it sees (LOCAL_RANK, RANK, GROUP_RANK, the emulated node it runs on),
evaluates two "log on rank 0" guards (LOCAL_RANK == 0 and RANK == 0, each appending one line to
its own shared log file), then resumes from both checkpoint stores and all-gathers the steps:
- node-local: written by LOCAL_RANK == 0 into NODE_LOCAL_DIR (each node its own folder);
- shared: written by RANK == 0 into the shared folder.
The store the script trusts (`checkpoint`: shared or node_local) sets where it resumes. When the
ranks disagree on that step, each says so and exits with code 3: run on, they would issue
different numbers of collectives and hang or fail in the last one.

Events (events-<pid>.jsonl): env, resume, step, saved, mismatch, finished.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

CHECKPOINT = "checkpoint.json"
ENV_KEYS = ("LOCAL_RANK", "RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE", "WORLD_SIZE")


def _write(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + f".{os.getpid()}.part")
    partial.write_text(json.dumps(record))
    partial.replace(path)


def _saved_step(folder: Path) -> int | None:
    try:
        return int(json.loads((folder / CHECKPOINT).read_text())["step"])
    except (OSError, ValueError, KeyError):
        return None


def main() -> None:
    spec = json.loads(Path(os.environ["CLUSTER_SPEC"]).read_text())
    out = Path(spec["out"])
    shared = out / "shared"
    node_local = Path(os.environ["NODE_LOCAL_DIR"])
    env = {key.lower(): int(os.environ[key]) for key in ENV_KEYS}
    fields = {**env, "node": int(os.environ["DRILL_NODE"])}
    sink = out / f"events-{os.getpid()}.jsonl"

    def write(event: str, **values: Any) -> None:
        with sink.open("a", encoding="utf-8") as events:
            record = {"event": event, "time": time.time(), **fields, **values}
            events.write(json.dumps(record) + "\n")

    dist.init_process_group("gloo", timeout=timedelta(seconds=float(spec["pg_timeout_s"])))
    rank, world = dist.get_rank(), dist.get_world_size()
    write("env", node_local=str(node_local))
    for guard, chosen in (("local_rank", env["local_rank"] == 0), ("rank", env["rank"] == 0)):
        if chosen:  # the "log on rank 0" guard, written two ways
            with (out / f"log-{guard}.txt").open("a", encoding="utf-8") as log:
                log.write(f"rank {rank} on node {fields['node']}: training starts\n")
    found = {"node_local": _saved_step(node_local), "shared": _saved_step(shared)}
    gathered: dict[str, list[int]] = {}
    for store, step in found.items():
        steps = [torch.zeros(1, dtype=torch.long) for _ in range(world)]
        dist.all_gather(steps, torch.tensor([-1 if step is None else step]))
        gathered[store] = [int(s.item()) for s in steps]
    trusted = spec["checkpoint"]
    start = found[trusted] or 0
    write("resume", found=found, gathered=gathered, store=trusted, step=start)
    agreed = {max(s, 0) for s in gathered[trusted]}
    if len(agreed) > 1:
        write("mismatch", steps=gathered[trusted])
        dist.destroy_process_group()
        sys.exit(3)
    value = torch.ones(1)
    step = start
    while step < int(spec["steps"]):
        dist.all_reduce(value)
        step += 1
        write("step", step=step)
        if step % int(spec["checkpoint_every"]) == 0:
            if env["local_rank"] == 0:
                _write(node_local / CHECKPOINT, {"step": step, "by_rank": rank})
                write("saved", store="node_local", step=step)
            if rank == 0:
                _write(shared / CHECKPOINT, {"step": step, "by_rank": rank})
                write("saved", store="shared", step=step)
        time.sleep(float(spec["step_sleep_s"]))
    write("finished", step=step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

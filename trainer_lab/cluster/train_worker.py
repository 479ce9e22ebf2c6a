"""Run by torchrun on every node of an emulated cluster (imports torch): a small data-parallel
training loop over gloo that checkpoints, and writes what it sees as JSON lines.

The spec (JSON, path in CLUSTER_SPEC) sets steps, the pause per step, the process group's
timeout, how often rank 0 saves, whether a start resumes from the latest checkpoint, and the
script's choice when the world size changes (`batch_policy`):
- keep_global: the global batch stays; each rank takes a larger share; the LR stays.
- keep_per_rank: each rank keeps its batch; the global batch follows the world size and the LR
  is scaled with it (linear scaling rule).

Once the file named by `stop_file` (optional; lab_run.STOP_FILE) exists, the loop ends at the
next step (the job finishes); when the file holds a step number, every rank ends after that step
(ranks that read the file at different steps still stop together).

With `monitored_barrier` set, a second gloo group is made at start, and after a failed
all_reduce each rank calls torch.distributed.monitored_barrier on it (the same timeout, every
rank waited for): its error names the rank that did not arrive (`barrier_error`, or
`barrier_passed` when every rank arrived).

Events (one file per process: events-<pid>.jsonl): start, resumed, step, saved,
collective_error (then the error is raised again, so the agent sees a failed worker),
barrier_error / barrier_passed, finished.
"""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

SAMPLES = 64
FEATURES = 4
CHECKPOINT = "checkpoint.pt"


class Events:
    def __init__(self, out: Path, fields: dict[str, Any]) -> None:
        self.path = out / f"events-{os.getpid()}.jsonl"
        self.fields = fields

    def write(self, event: str, **values: Any) -> None:
        record = {"event": event, "time": time.time(), **self.fields, **values}
        with self.path.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps(record) + "\n")


def _data() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(SAMPLES, FEATURES, generator=generator)
    target = inputs @ torch.arange(1.0, FEATURES + 1).unsqueeze(1)
    return inputs, target


def _batch_plan(spec: dict[str, Any], world: int) -> tuple[int, int, float]:
    """(global batch, per-rank batch, lr) at this world size, by the script's policy."""
    base_world = int(spec["base_world_size"])
    per_rank = int(spec["global_batch"]) // base_world
    if spec["batch_policy"] == "keep_global":
        global_batch = int(spec["global_batch"])
        return global_batch, global_batch // world, float(spec["lr"])
    global_batch = per_rank * world
    return global_batch, per_rank, float(spec["lr"]) * global_batch / int(spec["global_batch"])


def _save(out: Path, step: int, model: torch.nn.Module) -> None:
    partial = out / (CHECKPOINT + ".part")
    torch.save({"step": step, "model": model.state_dict()}, partial)
    partial.replace(out / CHECKPOINT)


def stop_step(stop_file: str | None) -> int | None:
    """The step after which the loop ends: None while the stop file is absent, the number it
    holds, or 0 (stop now) when it holds none."""
    if not stop_file:
        return None
    try:
        text = Path(stop_file).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else 0


def diagnose(events: Events, group: Any, timeout: timedelta, step: int) -> None:
    """After a failed collective: a monitored_barrier on a group of its own (the default
    group's connections may be broken), to name the ranks that do not arrive."""
    try:
        dist.monitored_barrier(group=group, timeout=timeout, wait_all_ranks=True)
    except Exception as error:
        events.write("barrier_error", step=step, message=str(error)[:500])
    else:
        events.write("barrier_passed", step=step)


def main() -> None:
    spec = json.loads(Path(os.environ["CLUSTER_SPEC"]).read_text())
    out = Path(spec["out"])
    timeout = timedelta(seconds=float(spec["pg_timeout_s"]))
    dist.init_process_group("gloo", timeout=timeout)
    barrier_group = (
        dist.new_group(backend="gloo", timeout=timeout) if spec.get("monitored_barrier") else None
    )
    rank, world = dist.get_rank(), dist.get_world_size()
    events = Events(
        out,
        {
            "rank": rank,
            "local_rank": int(os.environ["LOCAL_RANK"]),
            "group_rank": int(os.environ["GROUP_RANK"]),
            "world_size": world,
            "attempt": int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")),
            "node": int(os.environ.get("DRILL_NODE", "-1")),  # the emulated node it runs on
            "pid": os.getpid(),
        },
    )
    torch.manual_seed(0)
    model = torch.nn.Linear(FEATURES, 1)
    step = 0
    saved = out / CHECKPOINT
    if spec["resume"] and saved.exists():
        state = torch.load(saved)
        model.load_state_dict(state["model"])
        step = int(state["step"])
        events.write("resumed", step=step)
    global_batch, per_rank, lr = _batch_plan(spec, world)
    events.write("start", step=step, global_batch=global_batch, per_rank_batch=per_rank, lr=lr)
    inputs, target = _data()
    stop = spec.get("stop_file")
    while step < int(spec["steps"]):
        stop_at = stop_step(stop)
        if stop_at is not None and step >= stop_at:
            break
        first = (step * global_batch + rank * per_rank) % SAMPLES
        ids = [(first + i) % SAMPLES for i in range(per_rank)]
        loss = torch.nn.functional.mse_loss(model(inputs[ids]), target[ids])
        model.zero_grad()
        loss.backward()
        try:
            for param in model.parameters():
                assert param.grad is not None
                dist.all_reduce(param.grad)
                param.grad /= world
        except Exception as error:
            events.write("collective_error", step=step + 1, message=str(error)[:500])
            if barrier_group is not None:
                diagnose(events, barrier_group, timeout, step + 1)
            raise
        with torch.no_grad():  # plain SGD (torch.optim's first step imports the compiler: slow)
            for param in model.parameters():
                assert param.grad is not None
                param -= lr * param.grad
        step += 1
        events.write("step", step=step, loss=loss.item(), first_sample=ids[0], samples=len(ids))
        if rank == 0 and step % int(spec["checkpoint_every"]) == 0:
            _save(out, step, model)
            events.write("saved", step=step)
        time.sleep(float(spec["step_sleep_s"]))
    events.write("finished", step=step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""first-step worker (imports torch): what a restart costs before its first step.

1. The previous job: rank 0 starts a fresh interpreter that imports torch (timed), builds the
   model and AdamW, trains a few steps and saves {model, optimizer, step} with torch.save,
   then reports digests of both states. A fresh process, so none of its warm-up leaks into
   the restart measured below.
2. The restart, on every rank, each phase timed: a new process group (rendezvous and
   connection set-up through the store, then a first collective), the model build (another
   seed: only the load can make it right), the checkpoint load, the first step, then steady
   steps. The load reads the file through a counting reader (every byte torch.load pulls
   through read()/readinto() is counted; /proc/thread-self/io's rchar around it cross-checks)
   on ONE rank, which broadcasts the tensors to the others (in place into the parameters,
   the optimizer state as a skeleton plus tensors). Each rank then reports digests of its
   weights and its optimizer state.
3. The contrast: every rank reads the whole file itself; bytes counted the same way.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import nn

from trainer_lab.train.collectives import average_gradients
from trainer_lab.train.model import MLP

if TYPE_CHECKING:  # imported lazily: a fresh interpreter runs previous_job() from this module
    from trainer_lab.train.worker import WorkerContext

CHECKPOINT = "checkpoint/step-{step}.pt"


class CountingReader(io.RawIOBase):
    """A read-only file whose read()/readinto() calls count the bytes they return."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.raw = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by close())
        self.bytes_read = 0
        self.calls = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer) or 0
        self.bytes_read += n
        self.calls += 1
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def close(self) -> None:
        self.raw.close()
        super().close()


def rchar() -> int:
    """Bytes this thread passed through read()-family syscalls so far (-1: not available)."""
    try:
        for line in Path("/proc/thread-self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def read_checkpoint(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """torch.load through a CountingReader: (state, {bytes, calls, rchar})."""
    before = rchar()
    with CountingReader(path) as reader:
        state = torch.load(reader, map_location="cpu", weights_only=True)
        counted = {"bytes": reader.bytes_read, "calls": reader.calls}
    after = rchar()
    counted["rchar"] = after - before if before >= 0 and after >= 0 else -1
    return state, counted


def pack(value: Any, tensors: list[torch.Tensor]) -> Any:
    """The structure of `value` with every tensor replaced by a placeholder (its index in
    `tensors`, shape, dtype): what travels by broadcast_object_list; the tensors travel alone."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return {
            "__tensor__": len(tensors) - 1,
            "shape": list(value.shape),
            "dtype": str(value.dtype),
        }
    if isinstance(value, dict):
        return {k: pack(value[k], tensors) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return type(value)(pack(v, tensors) for v in value)
    return value


def unpack(skeleton: Any, tensors: list[torch.Tensor]) -> Any:
    if isinstance(skeleton, dict) and "__tensor__" in skeleton:
        return tensors[skeleton["__tensor__"]]
    if isinstance(skeleton, dict):
        return {k: unpack(v, tensors) for k, v in skeleton.items()}
    if isinstance(skeleton, list | tuple):
        return type(skeleton)(unpack(v, tensors) for v in skeleton)
    return skeleton


def placeholders(skeleton: Any) -> list[dict[str, Any]]:
    """The tensor placeholders of a skeleton, in index order."""
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict) and "__tensor__" in node:
            found.append(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list | tuple):
            for v in node:
                walk(v)

    walk(skeleton)
    return sorted(found, key=lambda p: p["__tensor__"])


def digest(state: Any) -> str:
    """sha256 of a state's structure and every tensor's bytes (CPU copies)."""
    tensors: list[torch.Tensor] = []
    skeleton = pack(state, tensors)
    h = hashlib.sha256(json.dumps(skeleton, sort_keys=True, default=str).encode())
    for t in tensors:
        h.update(t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:16]


def tensor_bytes(state: Any) -> int:
    tensors: list[torch.Tensor] = []
    pack(state, tensors)
    return sum(t.numel() * t.element_size() for t in tensors)


def build(cfg: dict[str, Any], seed: int, device: torch.device) -> tuple[nn.Module, Any]:
    torch.manual_seed(seed)
    model = MLP(cfg["width"], cfg["hidden"], cfg["depth"], cfg["width"], 0.0).to(device)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3)


def train_step(
    model: nn.Module, opt: Any, cfg: dict[str, Any], step: int, rank: int, world: int
) -> float:
    """One data-parallel step: own batch, gradients summed by one all-reduce, divided by W."""
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(10_000 * step + rank)
    x = torch.randn(cfg["batch"], cfg["width"], generator=gen).to(device)
    loss = nn.functional.mse_loss(model(x), x.flip(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if world > 1:
        average_gradients(model.parameters(), world)
    opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return loss.item()


def previous_job(path: str, cfg_json: str, import_s: float) -> None:
    """The job that wrote the checkpoint (a fresh interpreter): prints one JSON line."""
    cfg = json.loads(cfg_json)
    model, opt = build(cfg, seed=0, device=torch.device("cpu"))
    for step in range(1, cfg["saved_step"] + 1):
        train_step(model, opt, cfg, step, 0, 1)
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": cfg["saved_step"]}
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, target)
    report = {
        "import_torch_s": round(import_s, 4),
        "file_bytes": target.stat().st_size,
        "model_bytes": tensor_bytes(state["model"]),
        "optimizer_bytes": tensor_bytes(state["optimizer"]),
        "params": sum(p.numel() for p in model.parameters()),
        "model_digest": digest(model.state_dict()),
        "optimizer_digest": digest(opt.state_dict()),
    }
    print(json.dumps(report), flush=True)


def run_previous_job(path: Path, cfg: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    code = (
        "import os, time; from trainer_lab.procs import die_with_parent; "
        f"die_with_parent({os.getpid()}); t0 = time.perf_counter(); import torch; "
        "t1 = time.perf_counter(); from trainer_lab.labs.first_step.worker import previous_job; "
        f"previous_job({str(path)!r}, {json.dumps(cfg)!r}, t1 - t0)"
    )
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout_s
    )
    if done.returncode != 0:
        raise RuntimeError(f"the previous job failed ({done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["wall_s"] = round(time.perf_counter() - start, 4)
    return report


def load_broadcast(
    model: nn.Module, opt: Any, path: Path, rank: int, src: int, skip_optimizer: bool
) -> dict[str, Any]:
    """Rank 0 reads the file; `src` broadcasts the weights (in place into every rank's
    parameters) and the optimizer state (skeleton, then tensors)."""
    counted = {"bytes": 0, "calls": 0, "rchar": 0}
    opt_state = opt.state_dict()
    if rank == 0:
        state, counted = read_checkpoint(path)
        model.load_state_dict(state["model"])
        opt_state = state["optimizer"]
    sent = 0
    for tensor in model.state_dict().values():
        dist.broadcast(tensor, src=src)
        sent += tensor.numel() * tensor.element_size()
    meta_bytes = 0
    if not skip_optimizer:
        tensors: list[torch.Tensor] = []
        holder = [pack(opt_state, tensors) if rank == src else None]
        device = next(model.parameters()).device
        dist.broadcast_object_list(holder, src=src, device=device)
        skeleton = holder[0]
        meta_bytes = len(json.dumps(skeleton, default=str))
        if rank != src:
            tensors = [
                torch.zeros(p["shape"], dtype=getattr(torch, p["dtype"].split(".")[-1]))
                for p in placeholders(skeleton)
            ]
        moved = [t.to(device) for t in tensors]  # NCCL sends device tensors only
        for tensor in moved:
            dist.broadcast(tensor, src=src)
            sent += tensor.numel() * tensor.element_size()
        # back to where the reader's torch.load put them (CPU), as a local load would have
        # them: AdamW's load_state_dict then moves the moments to the parameters' device and
        # keeps `step` on the CPU (a non-capturable AdamW wants it there)
        opt.load_state_dict(unpack(skeleton, [t.cpu() for t in moved]))
    return {**counted, "broadcast_bytes": sent, "skeleton_json_bytes": meta_bytes}


def load_every_rank(model: nn.Module | None, opt: Any, path: Path) -> dict[str, Any]:
    """Every rank reads the whole file itself (no collective)."""
    state, counted = read_checkpoint(path)
    if model is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
    return {**counted, "broadcast_bytes": 0, "skeleton_json_bytes": 0}


def process_age_s() -> float:
    """Seconds since this process started (/proc/self/stat starttime, boot time from
    /proc/stat; 10 ms resolution); -1 where /proc lacks them."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22 of stat(5); fields[0] is field 3
        btime = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime")
        )
        return time.time() - (btime + ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, StopIteration, ValueError, IndexError):
        return -1.0


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    age = process_age_s()
    cfg, sabotage = spec["model"], spec["sabotage"]
    path = ctx.run_dir / CHECKPOINT.format(step=cfg["saved_step"])
    events = ctx.events()
    if ctx.rank == 0:
        events.write("previous_job", **run_previous_job(path, cfg, spec["collective_timeout_s"]))
    dist.barrier()

    phases: dict[str, float] = {"process_start_to_task_s": round(age, 4)}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[name] = round(now - clock, 6)
        clock = now

    group = dist.new_group(backend=ctx.backend)
    probe = torch.ones(1, device=ctx.device)
    dist.all_reduce(probe, group=group)
    lap("new_group_s")
    model, opt = build(cfg, seed=1 + ctx.rank, device=ctx.device)
    lap("model_build_s")
    if sabotage == "every_rank_reads":
        load = load_every_rank(model, opt, path)
    else:
        src = ctx.world_size - 1 if sabotage == "wrong_source" else 0
        load = load_broadcast(model, opt, path, ctx.rank, src, sabotage == "skip_optimizer")
    lap("checkpoint_load_s")
    loaded = {"model": digest(model.state_dict()), "optimizer": digest(opt.state_dict())}
    clock = time.perf_counter()  # the digests are the lab's, not the restart's
    train_step(model, opt, cfg, cfg["saved_step"] + 1, ctx.rank, ctx.world_size)
    lap("first_step_s")
    restart = ("new_group_s", "model_build_s", "checkpoint_load_s", "first_step_s")
    phases["restart_to_first_step_s"] = round(sum(phases[k] for k in restart), 6)
    steady = []
    for step in range(cfg["saved_step"] + 2, cfg["saved_step"] + 2 + spec["steady_steps"]):
        start = time.perf_counter()
        train_step(model, opt, cfg, step, ctx.rank, ctx.world_size)
        steady.append(time.perf_counter() - start)
    phases["steady_step_s"] = round(statistics.median(steady), 6)
    after_step = digest(model.state_dict())
    dist.barrier()
    start = time.perf_counter()
    contrast = load_every_rank(None, None, path)
    contrast["load_s"] = round(time.perf_counter() - start, 6)
    dist.destroy_process_group(group)
    events.write(
        "restart",
        phases=phases,
        load=load,
        loaded_digests=loaded,
        after_first_steps_digest=after_step,
        contrast=contrast,
    )
    dist.barrier()
    if ctx.rank == 0:
        path.unlink(missing_ok=True)  # ~20 MB: the run folder keeps the numbers, not the file

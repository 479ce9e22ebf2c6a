"""checkpoint-atomicity worker (imports torch). Every torchrun attempt first inspects the
checkpoint root (rank 0 loads every file of every directory: the ground truth), picks a
checkpoint the way the trainer does and restores it on every rank; then it trains and saves,
and on all attempts but the last one rank is SIGKILLed in the middle of a save, at a stage and
byte offset drawn from a seeded RNG. torchrun (--max-restarts) starts the next attempt. The
attempt that is not killed (normally the last) ends with rank 0 trying to load the latest
checkpoint under another config. Debug kill=never arms the kill for a save past the last one."""

from __future__ import annotations

import io
import json
import os
import pathlib
import pickle
import random
import re
import signal
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.config import TrainConfig
from trainer_lab.train.checkpoint import META, CheckpointManager, CheckpointMismatch
from trainer_lab.train.trainer import Trainer
from trainer_lab.train.worker import WorkerContext

# Where in CheckpointManager.save the victim dies.
STAGES = ("rank_file", "shared_file", "meta", "before_rename", "after_rename")
# What loading a torn checkpoint raises: missing file, truncated zip/pickle, partial JSON.
LOAD_ERRORS = (OSError, ValueError, KeyError, RuntimeError, EOFError, pickle.UnpicklingError)
_FINAL = re.compile(r"^step-(\d+)$")


def kill_plan(
    seed: int, attempt: int, world_size: int, saves: int, never: bool = False
) -> dict[str, Any]:
    """never (debug): the kill is armed for save number saves + 1, which is never made."""
    order = list(STAGES)
    random.Random(seed).shuffle(order)
    rng = random.Random(seed * 1000 + attempt)
    stage = order[attempt % len(order)]
    index = rng.randint(1, saves)
    return {
        "stage": stage,
        "save_index": saves + 1 if never else index,
        "fraction": round(rng.uniform(0.05, 0.95), 3),
        "rank": rng.randrange(world_size) if stage == "rank_file" else 0,
    }


def scan(root: Path, world_size: int) -> list[dict[str, Any]]:
    """Every directory under root, loaded file by file: the truth the pick is judged by."""
    found = []
    for entry in sorted(root.iterdir()) if root.exists() else []:
        if not entry.is_dir():
            continue
        complete, problem = True, ""
        try:
            meta = json.loads((entry / META).read_text())
            torch.load(entry / "shared.pt", weights_only=True)
            for rank in range(world_size):
                torch.load(entry / f"rank{rank}.pt", weights_only=True)
            step = int(meta["step"])
        except LOAD_ERRORS as error:
            complete, problem, step = False, f"{type(error).__name__}: {error}"[:200], None
        match = _FINAL.match(entry.name)
        found.append(
            {
                "name": entry.name,
                "committed": bool(match) and (entry / META).exists(),
                "complete": complete,
                "step": step if step is not None else (int(match.group(1)) if match else None),
                "problem": problem,
                "mtime": entry.stat().st_mtime,
            }
        )
    return found


def pick(manager: CheckpointManager, picker: str) -> Path | None:
    if picker == "latest_complete":
        return manager.latest()
    # The naive rule: the most recently modified directory, whatever state it is in.
    dirs = [p for p in manager.root.iterdir() if p.is_dir()] if manager.root.exists() else []
    return max(dirs, key=lambda p: p.stat().st_mtime, default=None)


def _die(events: Any, plan: dict[str, Any], where: str) -> None:
    events.write("kill", **plan, where=where)
    os.kill(os.getpid(), signal.SIGKILL)


def arm(events: Any, plan: dict[str, Any], state: dict[str, bool]) -> None:
    """Patch torch.save / Path.write_text / Path.rename in this process so that the save made
    while state["armed"] is true dies at the planned stage."""
    real_save, real_write, real_rename = torch.save, pathlib.Path.write_text, pathlib.Path.rename
    stage, fraction = plan["stage"], plan["fraction"]

    def partial(path: Path, data: bytes) -> None:
        with open(path, "wb") as handle:
            handle.write(data[: max(1, int(len(data) * fraction))])
            handle.flush()
            os.fsync(handle.fileno())

    def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
        name = Path(f).name if isinstance(f, str | os.PathLike) else ""
        target = "rank" if stage == "rank_file" else "shared" if stage == "shared_file" else None
        if state["armed"] and target and name.startswith(target):
            buffer = io.BytesIO()
            real_save(obj, buffer)
            partial(Path(f), buffer.getvalue())
            _die(events, plan, name)
        real_save(obj, f, *args, **kwargs)

    def write_text(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        if state["armed"] and stage == "meta" and self.name == META:
            partial(self, data.encode())
            _die(events, plan, self.name)
        return real_write(self, data, *args, **kwargs)

    def rename(self: Path, target: Any) -> Any:
        if state["armed"] and stage == "before_rename":
            _die(events, plan, f"{self.name} -> {Path(target).name}")
        moved = real_rename(self, target)
        if state["armed"] and stage == "after_rename":
            _die(events, plan, f"{self.name} -> {Path(target).name}")
        return moved

    torch.save = save
    pathlib.Path.write_text = write_text
    pathlib.Path.rename = rename


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    root = Path(spec["checkpoint_dir"])
    events = ctx.events()
    attempt = ctx.restart_count
    trials = int(spec["trials"])
    if ctx.rank == 0:
        events.write("scan", attempt=attempt, dirs=scan(root, ctx.world_size))
    dist.barrier()
    label = f"attempt-{attempt}"
    trainer = Trainer(cfg, ctx.device, events, run_label=label, checkpoint_dir=root)
    assert trainer.checkpoints is not None
    picked = pick(trainer.checkpoints, spec["picker"])
    outcome: dict[str, Any] = {"attempt": attempt, "picked": picked.name if picked else None}
    loaded = False
    if picked is not None:
        try:
            outcome["step"] = trainer.restore(picked)
            loaded = True
        except LOAD_ERRORS as error:
            outcome["error"] = f"{type(error).__name__}: {error}"[:300]
    # The ranks must agree before going on: a torn directory can hold one rank's good file and
    # another's partial one, and a rank that alone started fresh would rebuild DDP (a collective)
    # while its peers train.
    everywhere = torch.tensor([1 if loaded else 0])
    dist.all_reduce(everywhere, op=dist.ReduceOp.MIN)
    if picked is not None:
        outcome["ok"] = bool(everywhere.item())
        if not outcome["ok"]:
            # The naive picker's torn directory: record why it does not load, start fresh.
            outcome.setdefault("error", "another rank could not load it")
            trainer = Trainer(cfg, ctx.device, events, run_label=label, checkpoint_dir=root)
    events.write("pick", **outcome)
    state = {"armed": False}
    plan = None
    if attempt < trials:
        plan = kill_plan(
            int(spec["seed"]),
            attempt,
            ctx.world_size,
            int(spec["saves_per_attempt"]),
            never=spec.get("kill") == "never",
        )
        if ctx.rank == plan["rank"]:
            arm(events, plan, state)
    for index in range(1, int(spec["saves_per_attempt"]) + 1):
        trainer.train_step()
        state["armed"] = plan is not None and index == plan["save_index"]
        start = time.perf_counter()
        trainer.save_checkpoint()
        events.write(
            "save", attempt=attempt, step=trainer.step, seconds=time.perf_counter() - start
        )
    if ctx.rank == 0:  # only an attempt that was not killed gets here
        field = spec["incompatible"]
        other = cfg.with_(**{field: getattr(cfg, field) * 2})
        stranger = CheckpointManager(
            root, 0, ctx.world_size, other.identity(), other.identity_hash()
        )
        latest = trainer.checkpoints.latest()
        try:
            stranger.load(latest)  # type: ignore[arg-type]
            events.write("mismatch", refused=False, message="loaded without complaint")
        except CheckpointMismatch as error:
            events.write("mismatch", refused=True, message=str(error))
    dist.barrier()

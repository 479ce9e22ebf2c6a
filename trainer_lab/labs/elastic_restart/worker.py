"""elastic-restart worker (imports torch). Attempt 0 first trains an uncrashed reference, then
the checkpointed run, in which rank W-1 raises after step K. torchrun (--max-restarts) starts
every rank again; the new attempt resumes from the latest committed checkpoint and finishes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.train.trainer import RESTORE_PARTS, Trainer
from trainer_lab.train.worker import WorkerContext


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    events = ctx.events()
    attempt = ctx.restart_count
    events.write("attempt", attempt=attempt)
    if attempt == 0:
        reference = Trainer(cfg, ctx.device, events, run_label="reference")
        reference.train()
    trainer = Trainer(
        cfg,
        ctx.device,
        events,
        run_label=f"attempt-{attempt}",
        checkpoint_dir=Path(spec["checkpoint_dir"]),
    )
    latest = trainer.checkpoints.latest() if trainer.checkpoints else None
    if latest is not None and spec["resume"] != "scratch":
        parts = RESTORE_PARTS if spec["resume"] == "full" else frozenset({"model"})
        step = trainer.restore(latest, parts)
        events.write("resumed", attempt=attempt, step=step, path=str(latest))
    crash_step = int(spec["crash_step"])
    victim = ctx.world_size - 1

    def maybe_crash(record: dict[str, Any]) -> None:
        if attempt == 0 and ctx.rank == victim and record["step"] == crash_step:
            events.write("crash", attempt=attempt, step=record["step"])
            raise RuntimeError(f"simulated worker crash on rank {ctx.rank} after step {crash_step}")

    trainer.train(on_step=maybe_crash)
    events.write("finished", attempt=attempt, step=trainer.step)

"""resume worker (imports torch).

`uninterrupted_then_killed`: two uninterrupted runs (to show the baseline is repeatable), then
a run that checkpoints at step K and is SIGKILLed on every rank a few steps later.
`resume_modes`: in a new launch, one fresh Trainer per mode restores the last committed
checkpoint with some parts left out and trains on. A new Trainer re-seeds and builds a new
DDP, so each mode starts exactly like a fresh process would.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import torch.distributed as dist

from trainer_lab.config import TrainConfig
from trainer_lab.train.trainer import RESTORE_PARTS, Trainer
from trainer_lab.train.worker import WorkerContext

MODES: dict[str, frozenset[str]] = {
    "full": RESTORE_PARTS,
    "weights_only": frozenset({"model"}),
    "fresh_optimizer": RESTORE_PARTS - {"optimizer"},
    "no_rng": RESTORE_PARTS - {"rng"},
    "no_scheduler": RESTORE_PARTS - {"scheduler"},
}


def uninterrupted_then_killed(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    checkpoints = Path(spec["checkpoint_dir"])
    events = ctx.events()
    for label in ("uninterrupted", "uninterrupted_repeat"):
        Trainer(cfg, ctx.device, events, run_label=label).train()
    ctx.log("uninterrupted runs done")
    doomed = Trainer(
        cfg.with_(checkpoint_every=int(spec["resume_step"])),
        ctx.device,
        events,
        run_label="killed",
        checkpoint_dir=checkpoints,
    )
    kill_after = int(spec["kill_step"])

    def maybe_die(record: dict[str, Any]) -> None:
        if record["step"] == kill_after:
            events.write("sigkill", step=record["step"])
            os.kill(os.getpid(), signal.SIGKILL)

    doomed.train(on_step=maybe_die)
    raise RuntimeError("the killed run survived its SIGKILL")


def resume_modes(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    checkpoints = Path(spec["checkpoint_dir"])
    events = ctx.events()
    modes = dict(MODES)
    if spec.get("sabotage") == "full_without_rng":
        modes["full"] = RESTORE_PARTS - {"rng"}
    for mode, parts in modes.items():
        trainer = Trainer(cfg, ctx.device, events, run_label=mode, checkpoint_dir=checkpoints)
        trainer.restore(None, parts)
        trainer.train()
        ctx.log(f"mode {mode} resumed and trained to step {trainer.step}")
    dist.barrier()

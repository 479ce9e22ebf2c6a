"""sampler worker (imports torch): several short runs in one launch, each writing its events
under runs/<variant>/. A new Trainer re-seeds, so each run starts like a fresh process."""

from __future__ import annotations

from typing import Any

import torch.distributed as dist

from trainer_lab.config import TrainConfig
from trainer_lab.train.trainer import RESTORE_PARTS, Trainer
from trainer_lab.train.worker import WorkerContext


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    sabotage = spec["sabotage"]
    epoch_steps = int(spec["epoch_steps"])
    drop_epoch_steps = int(spec["drop_epoch_steps"])
    resume_at = int(spec["resume_at"])
    runs = ctx.run_dir / "runs"

    def trainer(variant: str, label: str, config: TrainConfig = cfg, **kw: Any) -> Trainer:
        return Trainer(
            config,
            ctx.device,
            ctx.events(runs / variant),
            run_label=label,
            checkpoint_dir=runs / "resume" / "checkpoints",
            **kw,
        )

    set_epoch = sabotage != "skip_set_epoch"
    trainer("epochs", "epochs", call_set_epoch=set_epoch).train(2 * epoch_steps)
    trainer("no_set_epoch", "no_set_epoch", call_set_epoch=False).train(2 * epoch_steps)
    trainer("drop_last", "drop_last", cfg.with_(drop_last=True)).train(drop_epoch_steps)
    ctx.log("epochs, no_set_epoch and drop_last runs done")

    before = trainer("resume", "before")
    before.train(resume_at)
    checkpoint = before.save_checkpoint()
    parts = RESTORE_PARTS - {"sampler"} if sabotage == "skip_sampler_state" else RESTORE_PARTS
    after = trainer("resume", "after")
    after.restore(checkpoint, parts)
    after.train(2 * epoch_steps)
    no_state = trainer("no_sampler_state", "after")
    no_state.restore(checkpoint, RESTORE_PARTS - {"sampler"})
    no_state.train(2 * epoch_steps)
    ctx.log(f"resume at step {resume_at} with and without sampler state done")
    dist.barrier()

"""step-phases worker (imports torch): the reference trainer's timed step under four scenarios.

Every run writes `step` events (phases per step) tagged with a run label:
- baseline: `baseline`.
- slow-loader: `serial` (a dataset that sleeps per item, no loader workers) and `prefetch`
  (the same dataset with loader worker processes and prefetching).
- checkpoint-stall: `sync` (DCP `save` every N steps, inside the step) and `async` (DCP
  `async_save`: the step only pays for staging a CPU copy; the write runs in a thread on its own
  gloo process group so it never interleaves with the training collectives).
- straggler: `even` and `straggler` (one rank sleeps in forward); explicit gradient sync, so the
  time a rank spends waiting for its peers shows up in its `grad_sync` phase.
"""

from __future__ import annotations

import shutil
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict
from torch.utils.data import DataLoader, Dataset

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import SyntheticDataset
from trainer_lab.train.trainer import Trainer
from trainer_lab.train.worker import WorkerContext


class SlowDataset(Dataset):
    """SyntheticDataset whose items take `delay_s` each, like reads from slow storage."""

    def __init__(self, cfg: TrainConfig, delay_s: float) -> None:
        self.base = SyntheticDataset(cfg)
        self.delay_s = delay_s

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        time.sleep(self.delay_s)  # simulated I/O latency, not synchronisation
        return self.base[index]


def use_loader(trainer: Trainer, dataset: Dataset, workers: int, prefetch: int) -> None:
    """Swap the trainer's loader for one over `dataset` (same sampler, same batch size)."""
    kwargs: dict[str, Any] = {}
    if workers > 0:
        kwargs = {"prefetch_factor": prefetch, "persistent_workers": True}
    trainer.loader = DataLoader(
        dataset,
        batch_size=trainer.cfg.global_batch // trainer.world_size,
        sampler=trainer.sampler,
        num_workers=workers,
        **kwargs,
    )
    trainer._batches = None


def baseline(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    trainer = Trainer(cfg, ctx.device, ctx.events(), run_label="baseline")
    if spec["loader_delay_s"] > 0:
        use_loader(trainer, SlowDataset(cfg, spec["loader_delay_s"]), 0, 0)
    trainer.train()


def slow_loader(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    dataset = SlowDataset(cfg, spec["loader_delay_s"])
    for label, workers in (("serial", 0), ("prefetch", spec["workers"])):
        trainer = Trainer(cfg, ctx.device, ctx.events(), run_label=label)
        use_loader(trainer, dataset, workers, spec["prefetch"])
        trainer.train()
        trainer._batches = None  # shuts the loader's worker processes down
        dist.barrier()


def _save_dir(ctx: WorkerContext, label: str, step: int) -> Path:
    return ctx.run_dir / f"ckpt-{label}" / f"step-{step:06d}"


def checkpoint_stall(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    every = spec["checkpoint_every"]
    events = ctx.events()
    ckpt_group = dist.new_group(backend="gloo")  # the async writer's own collectives
    for label in ("sync", "async"):
        trainer = Trainer(cfg, ctx.device, None, run_label=label)
        # A frozen part of the model (a pretrained table, say): saved with every checkpoint but
        # neither trained nor synchronised, so the save is big while the step stays cheap.
        frozen = torch.randn(spec["frozen_mb"] * 2**18, generator=torch.Generator().manual_seed(0))
        trainer.module.register_buffer("frozen", frozen)
        pending: Future | None = None
        for _ in range(cfg.steps):
            record = trainer.train_step()
            start = time.perf_counter()
            if every and trainer.step % every == 0:
                model_sd, optim_sd = get_state_dict(trainer.model, trainer.optimizer)
                state = {"model": model_sd, "optimizer": optim_sd, "step": trainer.step}
                target = _save_dir(ctx, label, trainer.step)
                if label == "sync" or spec.get("async_saves_sync"):  # the latter: sabotage
                    dcp.save(state, checkpoint_id=target)
                else:
                    if pending is not None:
                        pending.result()  # one save in flight at a time
                    waited = time.perf_counter() - start
                    pending = dcp.async_save(state, checkpoint_id=target, process_group=ckpt_group)
                    events.write("save", run=label, step=trainer.step, waited_s=waited)
            record["phases"]["checkpoint"] = time.perf_counter() - start
            events.write("step", **record)
        start = time.perf_counter()
        if pending is not None:
            pending.result()
        events.write("drain", run=label, seconds=time.perf_counter() - start)
        dist.barrier()
    dist.barrier()
    if ctx.rank == 0:  # the events are what the lab needs; the checkpoints only cost disk
        for label in ("sync", "async"):
            shutil.rmtree(ctx.run_dir / f"ckpt-{label}", ignore_errors=True)


def straggler(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    delay = spec["straggler_delay_s"]
    for label in ("even", "straggler"):
        trainer = Trainer(cfg, ctx.device, ctx.events(), run_label=label)
        if label == "straggler" and ctx.rank == spec["slow_rank"] and delay > 0:
            # a slow GPU / throttled host: this rank's forward takes `delay` longer
            trainer.module.register_forward_pre_hook(lambda _module, _args: time.sleep(delay))
        trainer.train()
        dist.barrier()


SCENARIOS = {
    "baseline": baseline,
    "slow-loader": slow_loader,
    "checkpoint-stall": checkpoint_stall,
    "straggler": straggler,
}


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    SCENARIOS[spec["scenario"]](ctx, spec)
    ctx.log(f"step-phases {spec['scenario']} done")

"""The reference trainer: one readable training step with timed phases (imports torch).

    data_wait -> h2d -> forward -> backward -> grad_sync -> optimizer -> checkpoint

Gradient sync modes (TrainConfig.grad_sync):
- "ddp": DistributedDataParallel; the all-reduce overlaps backward, so its time is inside
  `backward` and `grad_sync` only records the explicit boundary (near zero).
- "explicit": no DDP; after backward, ONE flattened all-reduce of every gradient in parameter
  order (the explicit synchronisation boundary). Its summation order never changes, which
  also makes resumes bit-identical at any world size.
- "none": single process, no communication.
- a `TrainSpec` with a `parallelize` builder: the builder owns communication (DDP on a
  process group, FSDP2 fully_shard, ...); the trainer adds none.
On CUDA the phase timer synchronises the device at phase boundaries so times are honest.

Labs whose loop is incidental plug their model, parallelism, optimizer, data, loss and
measurement hooks in through `TrainSpec` (train/spec.py) and keep this step.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer_lab.config import TrainConfig
from trainer_lab.events import EventWriter, encode_fields
from trainer_lab.train.checkpoint import CheckpointManager, rng_state, set_rng_state
from trainer_lab.train.spec import Placement, TrainSpec

RESTORE_PARTS = frozenset({"model", "optimizer", "scheduler", "scaler", "sampler", "rng"})


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def grad_digest(model: nn.Module) -> str:
    grads = [p.grad.detach().reshape(-1) for p in model.parameters() if p.grad is not None]
    flat = torch.cat(grads).to("cpu", torch.float32)
    return hashlib.sha256(flat.numpy().tobytes()).hexdigest()[:16]


class Trainer:
    """Model, optimizer, scheduler, data and checkpointing for one rank.

    `rank`/`world_size` default to the process group's; pass world_size=1 for a
    single-process run inside a distributed job (used as a reference by ddp-baseline).
    `spec` swaps in a lab's builders and hooks (default: the reference trainer's own).
    """

    def __init__(
        self,
        cfg: TrainConfig,
        device: torch.device | None = None,
        events: EventWriter | None = None,
        run_label: str | None = None,
        checkpoint_dir: Path | None = None,
        rank: int | None = None,
        world_size: int | None = None,
        call_set_epoch: bool = True,
        spec: TrainSpec | None = None,
    ) -> None:
        distributed = dist.is_available() and dist.is_initialized()
        self.rank = rank if rank is not None else (dist.get_rank() if distributed else 0)
        self.world_size = (
            world_size if world_size is not None else (dist.get_world_size() if distributed else 1)
        )
        self.cfg = cfg
        self.device = device or torch.device("cpu")
        self.events = events
        self.run_label = run_label  # also pre-encodes the step events' "run" field
        self.call_set_epoch = call_set_epoch
        self.spec = spec = spec or TrainSpec()
        self.sync_mode = cfg.grad_sync if self.world_size > 1 else "none"
        if spec.parallelize is not None:
            self.sync_mode = "parallelize"
        # Phase boundaries in integer nanoseconds: on CUDA, synchronise first so a phase owns its
        # kernels' time; on CPU the work is already done, and a bare perf_counter_ns keeps the
        # timers off the step time (ints also format into the event line faster than floats).
        on_cuda = self.device.type == "cuda"
        self._mark: Callable[[], int] = self._cuda_mark if on_cuda else time.perf_counter_ns
        self._copy_to_device = self.device.type != "cpu"  # a CPU batch is already there

        seed_everything(cfg.seed)  # same init on every rank (DDP broadcasts rank 0's anyway)
        self.module = spec.build_model(cfg).to(self.device)
        self.model: nn.Module = self.module
        if spec.parallelize is not None:
            placement = Placement(self.device, self.rank, self.world_size)
            self.model = spec.parallelize(self.module, placement)
        elif self.sync_mode == "ddp":
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.model = DDP(self.module, device_ids=ids)
        elif self.sync_mode == "explicit":
            for tensor in self.module.state_dict().values():
                dist.broadcast(tensor, src=0)
        self.optimizer = spec.build_optimizer(self.module, cfg)
        self.scheduler = spec.build_scheduler(self.optimizer, cfg)
        use_amp = cfg.amp and self.device.type == "cuda"
        self.scaler = torch.amp.GradScaler("cuda") if use_amp else None
        self.autocast = torch.autocast("cuda", dtype=torch.float16) if use_amp else None
        if spec.autocast is not None:
            self.autocast = torch.autocast(self.device.type, dtype=spec.autocast)
        self._loss = spec.loss
        self.loader, self.sampler = spec.build_loader(cfg, self.world_size, self.rank)
        self.step = 0
        self.epoch = 0
        self._batches: Any = None
        self.checkpoints = (
            CheckpointManager(
                checkpoint_dir, self.rank, self.world_size, cfg.identity(), cfg.identity_hash()
            )
            if checkpoint_dir is not None
            else None
        )

    @property
    def run_label(self) -> str | None:
        return self._run_label

    @run_label.setter
    def run_label(self, label: str | None) -> None:
        self._run_label = label
        self._run_tail = encode_fields(run=label) if label is not None else ""

    # -- data -------------------------------------------------------------------------------
    def _start_epoch(self) -> None:
        if self.call_set_epoch:
            self.sampler.set_epoch(self.epoch)
        self._batches = iter(self.loader)

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self._batches is None:
            self._start_epoch()
        try:
            return next(self._batches)
        except StopIteration:
            self.epoch += 1
            self.sampler.consumed = 0  # epoch progress resets even when set_epoch is forgotten
            self._start_epoch()
            return next(self._batches)

    # -- one step ---------------------------------------------------------------------------
    def _cuda_mark(self) -> int:
        torch.cuda.synchronize(self.device)
        return time.perf_counter_ns()

    def _sync_grads(self) -> None:
        grads = [p.grad for p in self.module.parameters() if p.grad is not None]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat.div_(self.world_size)
        offset = 0
        for g in grads:
            g.copy_(flat[offset : offset + g.numel()].view_as(g))
            offset += g.numel()

    def train_step(self) -> dict[str, Any]:
        """One optimizer step; returns (and writes) the step event."""
        t0 = self._mark()
        ids, x, y = self.next_batch()
        t1 = self._mark()
        if self._copy_to_device:
            x = x.to(self.device, non_blocking=True)
            y = y.to(self.device, non_blocking=True)
        t2 = self._mark()
        if self.autocast is not None:
            with self.autocast:
                loss = self._loss(self.cfg, self.model(x), y)
        else:
            loss = self._loss(self.cfg, self.model(x), y)
        t3 = self._mark()
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        t4 = self._mark()
        if self.sync_mode == "explicit":
            self._sync_grads()
        t5 = self._mark()
        if self.spec.on_grads is not None:
            self.spec.on_grads(self)
        digest = grad_digest(self.module) if self.cfg.log_grad_digest else None
        lr = self.scheduler.get_last_lr()[0]
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.spec.after_optimizer is not None:
            self.spec.after_optimizer(self)
        self.optimizer.zero_grad(set_to_none=True)
        self.scheduler.step()
        self.sampler.advance(ids.numel() * self.world_size)  # numel: C, len(): Python
        self.step += 1
        t6 = self._mark()
        if (
            self.checkpoints is not None
            and self.cfg.checkpoint_every
            and self.step % self.cfg.checkpoint_every == 0
        ):
            self.save_checkpoint()
        t7 = self._mark()
        loss_value = loss.item()
        sample_ids = ids.tolist()
        record: dict[str, Any] = {
            "step": self.step,
            "epoch": self.epoch,
            "loss": loss_value,
            "lr": lr,
            "sample_ids": sample_ids,
            "phases": {  # events.PHASES, in order
                "data_wait": (t1 - t0) / 1e9,
                "h2d": (t2 - t1) / 1e9,
                "forward": (t3 - t2) / 1e9,
                "backward": (t4 - t3) / 1e9,
                "grad_sync": (t5 - t4) / 1e9,
                "optimizer": (t6 - t5) / 1e9,
                "checkpoint": (t7 - t6) / 1e9,
            },
        }
        tail = self._run_tail
        if digest is not None:
            record["grad_digest"] = digest
            tail = encode_fields(grad_digest=digest) + tail
        if self._run_label is not None:
            record["run"] = self._run_label
        if self.events is not None:
            phases_ns = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6)
            self.events.write_step(
                self.step, self.epoch, loss_value, lr, sample_ids, phases_ns, tail
            )
        if self.rank == 0 and self.cfg.log_every and self.step % self.cfg.log_every == 0:
            # rank 0 only, concise; every rank's full record is in its events file
            label = f"[{self._run_label}] " if self._run_label else ""
            print(
                f"{label}step {self.step} epoch {self.epoch} loss {loss_value:.5f} "
                f"lr {lr:.2e} step {(t7 - t0) / 1e6:.1f} ms",
                file=sys.stderr,
                flush=True,
            )
        return record

    def train(
        self, until_step: int | None = None, on_step: Callable[[dict[str, Any]], None] | None = None
    ) -> list[dict[str, Any]]:
        """Train until `until_step` (default cfg.steps); returns the step records."""
        target = until_step if until_step is not None else self.cfg.steps
        records = []
        while self.step < target:
            record = self.train_step()
            records.append(record)
            if on_step is not None:
                on_step(record)
        return records

    # -- checkpoints ------------------------------------------------------------------------
    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        shared = {
            "model": self.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler is not None else None,
            "sampler": self.sampler.state_dict(),
            "step": self.step,
            "epoch": self.epoch,
        }
        return shared, {"rng": rng_state()}

    def save_checkpoint(self) -> Path:
        if self.checkpoints is None:
            raise RuntimeError("this trainer has no checkpoint directory")
        shared, per_rank = self.state()
        path = self.checkpoints.save(self.step, shared, per_rank)
        if self.events is not None:
            self.events.write("checkpoint", step=self.step, path=str(path), run=self.run_label)
        return path

    def restore(self, path: Path | None = None, parts: frozenset[str] = RESTORE_PARTS) -> int:
        """Restore the given parts (default all) from a checkpoint; returns its step.

        Step and epoch always come back (so runs line up step by step); leaving a part out
        reproduces a broken resume (fresh optimizer, no RNG restore, ...).
        """
        if self.checkpoints is None:
            raise RuntimeError("this trainer has no checkpoint directory")
        unknown = set(parts) - RESTORE_PARTS
        if unknown:
            raise ValueError(f"unknown restore parts: {sorted(unknown)}")
        path = path or self.checkpoints.latest()
        if path is None:
            raise FileNotFoundError(f"no committed checkpoint under {self.checkpoints.root}")
        shared, per_rank = self.checkpoints.load(path)
        if "model" in parts:
            self.module.load_state_dict(shared["model"])
        if "optimizer" in parts:
            self.optimizer.load_state_dict(shared["optimizer"])
        if "scheduler" in parts:
            self.scheduler.load_state_dict(shared["scheduler"])
        if "scaler" in parts and self.scaler is not None and shared["scaler"] is not None:
            self.scaler.load_state_dict(shared["scaler"])
        self.step = int(shared["step"])
        self.epoch = int(shared["epoch"])
        if "sampler" in parts:
            self.sampler.load_state_dict(shared["sampler"])
        else:
            self.sampler.set_epoch(self.epoch)
            self.sampler.consumed = 0
        if "rng" in parts and per_rank is not None:
            set_rng_state(per_rank["rng"])
        self._batches = None
        if self.events is not None:
            self.events.write(
                "restore", step=self.step, path=str(path), parts=sorted(parts), run=self.run_label
            )
        return self.step

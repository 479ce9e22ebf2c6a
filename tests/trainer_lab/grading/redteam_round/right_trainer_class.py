# RIGHT: class-based Trainer; AdamW + LambdaLR warmup/cosine schedule and dropout, with scheduler and the torch RNG state (identical on every rank) saved and restored; DDP + DistributedSampler; rank-0 atomic save.
from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler, default_collate

from drill_data import BATCH_SIZE, FEATURES, ToyDataset


@dataclass
class Config:
    steps: int
    ckpt_dir: str
    ckpt_every: int
    lr: float = 3e-3
    seed: int = 7


class PhaseTimer:
    def __init__(self):
        self.phases: dict[str, float] = {}
        self._start = self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.phases[name] = self.phases.get(name, 0.0) + (now - self._last)
        self._last = now

    def total(self) -> float:
        return self._last - self._start


class Trainer:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
        if self.distributed:
            dist.init_process_group("gloo")
        self.rank = dist.get_rank() if self.distributed else 0
        self.world = dist.get_world_size() if self.distributed else 1
        torch.manual_seed(cfg.seed)
        self.model = nn.Sequential(nn.Linear(FEATURES, 32), nn.GELU(), nn.Dropout(0.1), nn.Linear(32, 1))
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=0.01)
        warm = 3

        def lr_lambda(s):
            if s < warm:
                return (s + 1) / warm
            return 0.5 * (1 + math.cos(math.pi * min(1.0, (s - warm) / max(1, cfg.steps - warm))))

        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lr_lambda)
        self.data = ToyDataset()
        self.sampler = DistributedSampler(self.data, num_replicas=self.world, rank=self.rank,
                                          shuffle=True, seed=cfg.seed)
        self.steps_per_epoch = len(self.sampler) // BATCH_SIZE
        self.step = 0
        os.makedirs(cfg.ckpt_dir, exist_ok=True)
        self.load()
        self.ddp = DDP(self.model) if self.distributed else self.model

    # -- checkpointing ---------------------------------------------------------------------
    def _ckpt_path(self, step: int) -> str:
        return os.path.join(self.cfg.ckpt_dir, f"trainer-{step:06d}.ckpt")

    def load(self) -> None:
        candidates = []
        for name in os.listdir(self.cfg.ckpt_dir):
            stem, ext = os.path.splitext(name)
            if ext == ".ckpt" and stem.startswith("trainer-") and stem[8:].isdigit():
                candidates.append(int(stem[8:]))
        if not candidates:
            return
        state = torch.load(self._ckpt_path(max(candidates)), map_location="cpu", weights_only=False)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.sched.load_state_dict(state["sched"])
        torch.set_rng_state(state["rng"])
        self.step = state["step"]

    def save(self) -> None:
        # every rank runs the same dropout RNG stream (same seed, same draws), so rank 0's is everyone's
        if self.rank == 0:
            state = {"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                     "sched": self.sched.state_dict(), "rng": torch.get_rng_state(), "step": self.step}
            path = self._ckpt_path(self.step)
            tmp = os.path.join(self.cfg.ckpt_dir, f".incomplete-{self.step}")
            with open(tmp, "wb") as f:
                torch.save(state, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        if self.distributed:
            dist.barrier()

    # -- training ----------------------------------------------------------------------------
    def train_step(self, batch_ids: list[int], timer: PhaseTimer) -> float:
        _, x, y = default_collate([self.data[i] for i in batch_ids])
        timer.mark("data")
        self.ddp.train()
        loss = nn.functional.mse_loss(self.ddp(x), y)
        timer.mark("forward")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        timer.mark("backward")
        self.opt.step()
        self.sched.step()
        self.step += 1
        timer.mark("optim")
        return loss.item()

    def fit(self) -> None:
        while self.step < self.cfg.steps:
            epoch, offset = divmod(self.step, self.steps_per_epoch)
            self.sampler.set_epoch(epoch)
            ids = list(self.sampler)
            for b in range(offset, self.steps_per_epoch):
                if self.step >= self.cfg.steps:
                    break
                timer = PhaseTimer()
                loss = self.train_step(ids[b * BATCH_SIZE:(b + 1) * BATCH_SIZE], timer)
                if self.step % self.cfg.ckpt_every == 0:
                    self.save()
                timer.mark("checkpoint")
                if self.rank == 0:
                    print(json.dumps({"step": self.step, "loss": loss, "phases": timer.phases,
                                      "step_time": timer.total()}), flush=True)

    def close(self) -> None:
        if self.distributed:
            dist.barrier()
            dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--ckpt-every", type=int, default=4)
    a = p.parse_args()
    t = Trainer(Config(a.steps, a.ckpt_dir, a.ckpt_every))
    t.fit()
    t.close()


if __name__ == "__main__":
    main()

"""TrainSpec: the reference trainer with a lab's builders and probes plugged in (one process)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import build_loader
from trainer_lab.train.model import build_model, loss_fn
from trainer_lab.train.spec import Placement, TrainSpec, build_constant_lr
from trainer_lab.train.trainer import Trainer

CFG = TrainConfig(steps=4, log_every=0)


def losses(trainer: Trainer) -> list[float]:
    return [record["loss"] for record in trainer.train()]


def test_the_default_spec_is_the_reference_trainer() -> None:
    assert losses(Trainer(CFG)) == losses(Trainer(CFG, spec=TrainSpec()))


def test_builders_and_probes_are_called_where_the_step_needs_them() -> None:
    seen: list[Any] = []

    class Scaled(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return 2 * self.inner(x)

    def parallelize(model: nn.Module, where: Placement) -> nn.Module:
        seen.append(("parallelize", where.rank, where.world_size, where.device.type))
        return Scaled(model)

    def on_grads(trainer: Trainer) -> None:
        assert all(p.grad is not None for p in trainer.module.parameters())
        seen.append(("grads", trainer.step))

    def after_optimizer(trainer: Trainer) -> None:
        assert all(p.grad is not None for p in trainer.module.parameters())  # not yet freed
        seen.append(("stepped", trainer.step))

    def loader(cfg: TrainConfig, world_size: int, rank: int) -> tuple[Any, Any]:
        seen.append(("loader", world_size, rank))
        return build_loader(cfg, world_size, rank)

    spec = TrainSpec(
        build_model=lambda cfg: build_model(cfg.with_(hidden=8)),
        parallelize=parallelize,
        build_optimizer=lambda model, cfg: torch.optim.SGD(model.parameters(), lr=0.1),
        build_scheduler=build_constant_lr,
        build_loader=loader,
        loss=lambda cfg, out, y: 10 * loss_fn(cfg, out, y),
        on_grads=on_grads,
        after_optimizer=after_optimizer,
    )
    trainer = Trainer(CFG, spec=spec)
    records = trainer.train(until_step=2)
    assert seen == [
        ("parallelize", 0, 1, "cpu"),
        ("loader", 1, 0),
        ("grads", 0),
        ("stepped", 0),
        ("grads", 1),
        ("stepped", 1),
    ]
    assert isinstance(trainer.model, Scaled) and trainer.module is trainer.model.inner
    assert trainer.module.net[0].out_features == 8
    assert isinstance(trainer.optimizer, torch.optim.SGD)
    assert [r["lr"] for r in records] == [0.1, 0.1]  # constant: no warm-up
    assert trainer.sync_mode == "parallelize"
    assert all(p.grad is None for p in trainer.module.parameters())  # freed after the probe

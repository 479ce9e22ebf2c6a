"""forgetting worker (imports torch): pretrain a small model on task A, fine-tune it on a
shifted task B in several ways, and measure what is left of A.

Task A: 4-way classification of Gaussian inputs by a random linear rule. Task B: inputs
shifted (another region of input space, overlapping A's) and labelled by another rule.
Variants, each from the same pretrained weights:
- full_high_lr: every weight trains, Adam at the high LR;
- full_low_lr: every weight trains, Adam at the low LR;
- lora: rank-r adapters (torch.nn.utils.parametrize) on every Linear, base frozen, high LR;
- replay: full_high_lr with a share of every batch drawn from task A's training data.
All on CPU in float32. Rank 0 does the work; other ranks wait.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.utils import parametrize

from trainer_lab.train.worker import WorkerContext

D_IN, HIDDEN, CLASSES, N_TRAIN, N_TEST, BATCH = 16, 128, 4, 2048, 1024, 256


class LoRA(nn.Module):
    def __init__(self, out_f: int, in_f: int, rank: int) -> None:
        super().__init__()
        self.A = nn.Parameter(torch.randn(rank, in_f) / in_f**0.5)
        self.B = nn.Parameter(torch.zeros(out_f, rank))
        self.scale = 2.0  # alpha / r with alpha = 2 r

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return weight + self.scale * (self.B @ self.A)


def make_task(seed: int, shifted: bool, shift: float) -> dict[str, torch.Tensor]:
    """A: labels from a rule over the first half of the features; the second half is near 0.
    B (shifted): the second half is active and offset by `shift`, labels come from another rule
    over it alone, and the first half is still there (a distractor for B)."""
    gen = torch.Generator().manual_seed(seed)
    half = D_IN // 2
    w = torch.randn(half, CLASSES, generator=gen)
    x = torch.randn(N_TRAIN + N_TEST, D_IN, generator=gen)
    if shifted:
        y = (x[:, half:] @ w).argmax(-1)
        x[:, half:] += shift
    else:
        y = (x[:, :half] @ w).argmax(-1)
        x[:, half:] *= 0.1
    return {"x": x[:N_TRAIN], "y": y[:N_TRAIN], "x_test": x[N_TRAIN:], "y_test": y[N_TRAIN:]}


def build(seed: int) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(D_IN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, CLASSES),
    )


def accuracy(model: nn.Module, task: dict[str, torch.Tensor]) -> float:
    with torch.no_grad():
        return round(float((model(task["x_test"]).argmax(-1) == task["y_test"]).float().mean()), 4)


def train(
    model: nn.Module,
    task: dict[str, torch.Tensor],
    steps: int,
    lr: float,
    seed: int,
    replay: dict[str, torch.Tensor] | None = None,
    replay_share: float = 0.0,
) -> None:
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    n_replay = int(BATCH * replay_share) if replay is not None else 0
    for _ in range(steps):
        idx = torch.randint(0, N_TRAIN, (BATCH - n_replay,), generator=gen)
        x, y = task["x"][idx], task["y"][idx]
        if replay is not None and n_replay:
            ridx = torch.randint(0, N_TRAIN, (n_replay,), generator=gen)
            x, y = torch.cat([x, replay["x"][ridx]]), torch.cat([y, replay["y"][ridx]])
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def experiment(spec: dict[str, Any]) -> dict[str, Any]:
    sabotage, seed = spec["sabotage"], spec["seed"]
    task_a = make_task(seed, False, 0.0)
    task_b = task_a if sabotage == "no_shift" else make_task(seed + 1, True, spec["shift"])
    pretrained = build(seed)
    train(pretrained, task_a, spec["pretrain_steps"], 3e-3, seed)
    before = {"acc_a": accuracy(pretrained, task_a), "acc_b": accuracy(pretrained, task_b)}
    state = pretrained.state_dict()
    high, low = spec["high_lr"], spec["low_lr"]
    if sabotage == "low_lr_is_high":
        low = high
    variants: dict[str, dict[str, Any]] = {}
    for name in ("full_high_lr", "full_low_lr", "lora", "replay"):
        model = build(seed)
        model.load_state_dict(state)
        lr = low if name == "full_low_lr" else high
        replay, share = None, 0.0
        if name == "lora":
            for module in model.modules():
                if isinstance(module, nn.Linear):
                    out_f, in_f = module.weight.shape
                    parametrize.register_parametrization(
                        module, "weight", LoRA(out_f, in_f, spec["rank"])
                    )
                    if sabotage != "lora_unfrozen_base":
                        module.parametrizations.weight.original.requires_grad_(False)
                        module.bias.requires_grad_(False)
        if name == "replay":
            replay, share = (
                (task_b if sabotage == "replay_from_b" else task_a),
                spec["replay_share"],
            )
        train(model, task_b, spec["steps"], lr, seed + 2, replay, share)
        acc_a, acc_b = accuracy(model, task_a), accuracy(model, task_b)
        variants[name] = {
            "lr": lr,
            "acc_a": acc_a,
            "acc_b": acc_b,
            "forgetting": round(before["acc_a"] - acc_a, 4),
            "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
        }
    return {"pretrained": before, "variants": variants}


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        torch.set_num_threads(1)  # reductions then do not depend on the core count
        ctx.events().write("forgetting", **experiment(spec))
        ctx.log("forgetting done")
    if dist.is_initialized():
        dist.barrier()

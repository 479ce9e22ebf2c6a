"""masked-loss worker (imports torch): one multi-task model trained twice on the same sparse
assay matrix, once with the loss masked to observed entries, once with missing entries filled
with 0 ("inactive").

Synthetic data with a known truth: compounds come in chemical series (clusters of feature
vectors); every task has a true label for every compound, but each assay was run on a few
series only (structured missingness, as in real screening data), so most entries are hidden.
Because the truth is known, the lab can score both models on the hidden entries too.
Rank 0 does the work (this lab is about the loss, not communication); other ranks wait.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from trainer_lab.train.worker import WorkerContext

N_COMPOUNDS, N_FEATURES, N_TASKS, N_SERIES, SERIES_PER_TASK = 1600, 16, 8, 8, 3


def auroc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """Mann-Whitney AUROC (ties get the mean rank)."""
    labels = labels.bool()
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = scores.argsort()
    ranks = torch.empty_like(scores, dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    for value in scores[order][1:][scores[order][1:] == scores[order][:-1]].unique():
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def make_data(seed: int, observed_share: float | None) -> dict[str, torch.Tensor]:
    """Features, true labels, and the observed mask. observed_share=None: structured by
    series; a number: each entry observed at random with that probability."""
    gen = torch.Generator().manual_seed(seed)
    centers = torch.randn(N_SERIES, N_FEATURES, generator=gen) * 2.0
    series = torch.arange(N_COMPOUNDS) % N_SERIES
    x = centers[series] + torch.randn(N_COMPOUNDS, N_FEATURES, generator=gen)
    w = torch.randn(N_FEATURES, N_TASKS, generator=gen)
    logits = x @ w / N_FEATURES**0.5
    bias = -logits.median(dim=0).values  # about half of each task's compounds are active
    y = ((logits + bias + 0.3 * torch.randn(logits.shape, generator=gen)) > 0).float()
    if observed_share is None:
        tested = torch.zeros(N_SERIES, N_TASKS, dtype=torch.bool)
        for t in range(N_TASKS):
            tested[torch.randperm(N_SERIES, generator=gen)[:SERIES_PER_TASK], t] = True
        observed = tested[series]
    else:
        observed = torch.rand(N_COMPOUNDS, N_TASKS, generator=gen) < observed_share
    is_test = torch.rand(N_COMPOUNDS, generator=gen) < 0.25
    return {"x": x, "y": y, "observed": observed, "is_test": is_test}


def train(data: dict[str, torch.Tensor], mode: str, steps: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(N_FEATURES, 64), nn.ReLU(), nn.Linear(64, N_TASKS))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    train_rows = ~data["is_test"]
    x, y, observed = data["x"][train_rows], data["y"][train_rows], data["observed"][train_rows]
    target = torch.where(observed, y, torch.zeros_like(y))  # the zero-filled matrix
    for _ in range(steps):
        logits = model(x)
        if mode == "masked":
            # mean over observed entries only: missing entries give no gradient at all
            loss = nn.functional.binary_cross_entropy_with_logits(logits[observed], y[observed])
        else:
            loss = nn.functional.binary_cross_entropy_with_logits(logits, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model


def evaluate(model: nn.Module, data: dict[str, torch.Tensor]) -> dict[str, Any]:
    rows = data["is_test"]
    with torch.no_grad():
        prob = torch.sigmoid(model(data["x"][rows]))
    y, observed = data["y"][rows], data["observed"][rows]
    hidden = ~observed
    filled = torch.where(observed, y, torch.zeros_like(y))
    return {
        "auroc_observed": round(auroc(prob[observed], y[observed]), 4),
        "auroc_hidden": round(auroc(prob[hidden], y[hidden]), 4) if hidden.any() else None,
        "mean_pred_observed": round(float(prob[observed].mean()), 4),
        "mean_pred_hidden": round(float(prob[hidden].mean()), 4) if hidden.any() else None,
        "filled_accuracy": round(float(((prob > 0.5).float() == filled).float().mean()), 4),
    }


def experiment(spec: dict[str, Any]) -> dict[str, Any]:
    sabotage = spec["sabotage"]
    data = make_data(spec["seed"], 0.9 if sabotage == "mostly_observed" else None)
    rows = data["is_test"]
    y, observed = data["y"][rows], data["observed"][rows]
    result: dict[str, Any] = {
        "observed_share": round(float(data["observed"].float().mean()), 4),
        "true_rate_observed": round(float(y[observed].mean()), 4),
        "true_rate_hidden": round(float(y[~observed].mean()), 4) if (~observed).any() else None,
        "test_compounds": int(rows.sum()),
    }
    for name in ("masked", "zero_filled"):
        mode = "zero_filled" if name == "zero_filled" or sabotage == "mask_ignored" else "masked"
        result[name] = evaluate(train(data, mode, spec["steps"], spec["seed"]), data)
    return result


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        torch.set_num_threads(1)  # reductions then do not depend on the core count
        ctx.events().write("masked_loss", **experiment(spec))
        ctx.log("masked-loss done")
    if dist.is_initialized():
        dist.barrier()

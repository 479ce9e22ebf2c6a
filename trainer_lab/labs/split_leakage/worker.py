"""split-leakage worker (imports torch): the same model and data scored on a random split and
on a group (scaffold) split.

Synthetic molecules come in series: members of a series are near-duplicates of its centre
(like analogues sharing a Bemis-Murcko scaffold). Activity = a smooth function of the
features that transfers across series + a series-specific offset that does not (an SAR
effect of the scaffold) + noise. A random split puts siblings of every test molecule in
training, so memorising series offsets scores well; a group split keeps every series on one
side, so only the transferable part helps. A 1-nearest-neighbour lookup is the leak detector.
Rank 0 does the work; other ranks wait.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from trainer_lab.train.worker import WorkerContext

N_SERIES, PER_SERIES, N_FEATURES, TEST_SHARE = 80, 10, 32, 0.2


def make_data(seed: int, series: bool) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    n = N_SERIES * PER_SERIES
    if series:
        group = torch.arange(n) // PER_SERIES
        centers = torch.randn(N_SERIES, N_FEATURES, generator=gen)
        x = centers[group] + 0.1 * torch.randn(n, N_FEATURES, generator=gen)
        offset = torch.randn(N_SERIES, generator=gen)[group]
    else:  # every molecule its own series: no near-duplicates anywhere
        group = torch.arange(n)
        x = torch.randn(n, N_FEATURES, generator=gen)
        offset = torch.randn(n, generator=gen)
    w = torch.randn(N_FEATURES, generator=gen)
    y = x @ w / N_FEATURES**0.5 + offset + 0.1 * torch.randn(n, generator=gen)
    return {"x": x, "y": y, "group": group}


def random_split(n: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed + 1)
    test = torch.zeros(n, dtype=torch.bool)
    test[torch.randperm(n, generator=gen)[: int(TEST_SHARE * n)]] = True
    return test


def group_split(group: torch.Tensor, seed: int, leaky: bool) -> torch.Tensor:
    """Whole groups go to test until it holds TEST_SHARE of the rows. leaky: the bug of
    splitting rows while believing they are groups (e.g. grouping by a per-row id)."""
    if leaky:
        return random_split(len(group), seed + 7)
    gen = torch.Generator().manual_seed(seed + 2)
    ids = group.unique()
    test = torch.zeros(len(group), dtype=torch.bool)
    for g in ids[torch.randperm(len(ids), generator=gen)]:
        if test.sum() >= TEST_SHARE * len(group):
            break
        test |= group == g
    return test


def r2(pred: torch.Tensor, y: torch.Tensor) -> float:
    return float(1 - ((pred - y) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def fit_mlp(x: torch.Tensor, y: torch.Tensor, steps: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(N_FEATURES, 128), nn.ReLU(), nn.Linear(128, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(steps):
        loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model


def score(data: dict[str, torch.Tensor], test: torch.Tensor, spec: dict[str, Any]) -> dict:
    x, y, group = data["x"], data["y"], data["group"]
    train = ~test
    model = fit_mlp(x[train], y[train], spec["steps"], spec["seed"])
    with torch.no_grad():
        pred = model(x[test]).squeeze(-1)
    dist_to_train = torch.cdist(x[test], x[train])
    nearest = dist_to_train.argmin(dim=1)
    shared = set(group[test].tolist()) & set(group[train].tolist())
    return {
        "model_r2": round(r2(pred, y[test]), 4),
        "nn_r2": round(r2(y[train][nearest], y[test]), 4),
        "median_nn_distance": round(float(dist_to_train.min(dim=1).values.median()), 4),
        "shared_groups": len(shared),
        "test_rows": int(test.sum()),
    }


def experiment(spec: dict[str, Any]) -> dict[str, Any]:
    sabotage = spec["sabotage"]
    data = make_data(spec["seed"], series=sabotage != "no_series")
    n = len(data["y"])
    return {
        "random": score(data, random_split(n, spec["seed"]), spec),
        "group": score(
            data, group_split(data["group"], spec["seed"], sabotage == "leaky_group_split"), spec
        ),
        "molecules": n,
        "groups": int(data["group"].unique().numel()),
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        torch.set_num_threads(1)  # reductions then do not depend on the core count
        ctx.events().write("split_leakage", **experiment(spec))
        ctx.log("split-leakage done")
    if dist.is_initialized():
        dist.barrier()

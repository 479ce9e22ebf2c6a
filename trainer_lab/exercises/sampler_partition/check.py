"""sampler-partition: run 2 epochs (and epoch 1 again) on every rank; the dataset's items are
their ids, so the batches say which ids each rank saw."""

from collections import Counter

import torch
from torch.utils.data import Dataset

from trainer_lab.exercises._checker.ctx import Ctx

N, BATCH = 24, 4


class Ids(Dataset):
    def __len__(self) -> int:
        return N

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.tensor(i)


def _ids(ctx: Ctx, fn, epoch: int, state: dict) -> list[int]:
    got: list[int] = []
    for batch in ctx.call(lambda: list(fn(Ids(), epoch, BATCH, state))):
        got.extend(int(i) for i in torch.as_tensor(batch).reshape(-1))
    return got


def run(ctx: Ctx) -> None:
    fn = ctx.attr("epoch_batches")
    state: dict = {}
    epochs = [_ids(ctx, fn, e, state) for e in (0, 1)]
    again = _ids(ctx, fn, 1, state)
    every = ctx.gather("ids", epochs)
    problems = []
    for e in (0, 1):
        counts = Counter(i for rank_ids in every for i in rank_ids[e])
        dup = sorted(i for i, c in counts.items() if c > 1)
        missing = sorted(set(range(N)) - set(counts))
        if dup:
            owners = [r for r, rank_ids in enumerate(every) if dup[0] in rank_ids[e]]
            problems.append(f"epoch {e}: id {dup[0]} seen {counts[dup[0]]} times (ranks "
                            f"{owners}); {len(dup)} ids seen more than once")  # fmt: skip
        if missing:
            problems.append(f"epoch {e}: {len(missing)} ids never seen, e.g. {missing[:4]}")
    sizes = [[len(rank_ids[e]) for e in (0, 1)] for rank_ids in every]
    ctx.check(
        "exactly_once",
        not problems,
        "; ".join(problems) or f"{N} ids split {sizes} (per rank, per epoch), each seen once",
    )
    ctx.check(
        "new_order",
        epochs[0] != epochs[1],
        f"epoch 0 began {epochs[0][:6]}, epoch 1 began {epochs[1][:6]}"
        + ("" if epochs[0] != epochs[1] else ": the same order every epoch"),
    )
    ctx.check(
        "same_split_per_epoch",
        sorted(again) == sorted(epochs[1]),
        "epoch 1 run twice gave this rank the same ids"
        if sorted(again) == sorted(epochs[1])
        else f"epoch 1 run twice gave this rank different ids: {sorted(epochs[1])[:6]} vs "
        f"{sorted(again)[:6]} (the split must depend on the epoch only)",
    )

"""resumable-sampler: on every rank, epoch 1 uninterrupted, then epoch 1 again stopped after K
batches, its state saved to a file and restored into a new loader; the dataset's items are their
ids, so the batches say which ids each rank saw before and after the restart."""

from collections import Counter

import torch
from torch.utils.data import Dataset

from trainer_lab.exercises._checker.ctx import Ctx

N, BATCH, K, EPOCH = 40, 4, 2, 1


class Ids(Dataset):
    def __len__(self) -> int:
        return N

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.tensor(i)


def _flat(batches: list) -> list[int]:
    return [int(i) for b in batches for i in torch.as_tensor(b).reshape(-1)]


def _take(ctx: Ctx, loader: object, count: int | None) -> list[int]:
    def take() -> list:
        it = iter(loader)  # type: ignore[call-overload]
        if count is None:
            return list(it)
        return [next(it) for _ in range(count)]

    return _flat(ctx.call(take))


def run(ctx: Ctx) -> None:
    cls = ctx.attr("ResumableLoader")
    full_loader = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(full_loader.set_epoch, EPOCH)
    full = _take(ctx, full_loader, None)

    first = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(first.set_epoch, EPOCH)
    before = _take(ctx, first, K)
    path = ctx.scratch / "loader_state.pt"
    torch.save(ctx.call(first.state_dict), path)
    del first  # the restart: a new loader knows only what was saved
    resumed = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(resumed.load_state_dict, torch.load(path, weights_only=False))
    after = _take(ctx, resumed, None)

    every = ctx.gather("ids", {"full": full, "before": before, "after": after})
    wrong = []
    for r, got in enumerate(every):
        if got["before"] + got["after"] == got["full"]:
            continue
        expected = got["full"][len(got["before"]) :]
        why = (" (the resumed loader started the epoch over)"
               if set(got["after"]) & set(got["before"])
               else " (it jumped past samples it was never given)"
               if len(got["after"]) < len(expected) else "")  # fmt: skip
        wrong.append(f"after resuming at step {K} rank {r} got {len(got['after'])} ids "
                     f"{got['after'][:6]}, the uninterrupted epoch went on with the "
                     f"{len(expected)} ids {expected[:6]}{why}")  # fmt: skip
    ctx.check(
        "matches_uninterrupted",
        not wrong,
        "; ".join(wrong)
        or f"each rank's {K} batches before and the rest after the restart equal the "
        "uninterrupted epoch, in order",
    )
    counts = Counter(i for got in every for i in got["before"] + got["after"])
    dup = sorted(i for i, c in counts.items() if c > 1)
    ctx.check(
        "no_replay",
        not dup,
        f"{len(dup)} ids seen twice across the restart, e.g. {dup[:4]}"
        if dup
        else "no id seen twice across the restart",
    )
    missing = sorted(set(range(N)) - set(counts))
    ctx.check(
        "no_skip",
        not missing,
        f"{len(missing)} of {N} ids never seen across the restart, e.g. {missing[:4]}"
        if missing
        else f"all {N} ids seen",
    )

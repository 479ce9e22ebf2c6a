"""resumable-sampler: on every rank, epoch 1 uninterrupted, then epoch 1 again stopped after K
batches, its state saved to a file and restored into a new loader; the dataset's items are their
ids, so the batches say which ids each rank saw before and after the restart.

A loader also lives across epochs: set_epoch must start the new epoch from its beginning, after
a full epoch, after a resumed one, and after one abandoned mid-way (next_epoch)."""

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


def _resumed_how(before: list[int], after: list[int], full: list[int]) -> str:
    """What the resumed ids look like against the uninterrupted epoch: the likely cause."""
    k = len(before)
    if after[: len(full)] == full and k:
        return " (the resumed loader started the epoch over: the position was not restored)"
    for j in range(1, k + 1):
        if after == full[k - j :]:
            return (
                f" (it replayed the last {j} ids it had already given: the saved position is {j} "
                "behind what was handed out)"
            )
    for j in range(1, len(full) - k + 1):
        if after == full[k + j :]:
            return (
                f" (it jumped past {j} ids it was never given: the saved position is {j} ahead, "
                "e.g. counted for all ranks or counted before the batch was handed out)"
            )
    if sorted(after) == sorted(full[k:]):
        return " (the right ids in another order: the resumed loader shuffles differently)"
    if set(after) & set(before):
        return " (ids it had already given come back)"
    return ""


def _next_epoch(ctx: Ctx, loaders: dict[str, object], fresh: list[int], epoch: int) -> list[str]:
    """set_epoch(epoch) then a full epoch on each of `loaders` must give `fresh`."""
    wrong = []
    for what, loader in loaders.items():
        ctx.call(loader.set_epoch, epoch)  # type: ignore[attr-defined]
        got = _take(ctx, loader, None)
        if got != fresh:
            wrong.append(
                f"after {what}, set_epoch({epoch}) gave {len(got)} ids {got[:6]}; a fresh "
                f"loader's epoch {epoch} gives {len(fresh)} ids {fresh[:6]}"
            )
    return wrong


def run(ctx: Ctx) -> None:
    cls = ctx.attr("ResumableLoader")
    full_loader = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(full_loader.set_epoch, EPOCH)
    full = _take(ctx, full_loader, None)
    fresh = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(fresh.set_epoch, EPOCH + 1)
    full_next = _take(ctx, fresh, None)
    living = ctx.call(cls, Ids(), BATCH, seed=0)  # one loader for two epochs
    ctx.call(living.set_epoch, EPOCH - 1)
    _take(ctx, living, None)

    first = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(first.set_epoch, EPOCH)
    before = _take(ctx, first, K)
    path = ctx.scratch / "loader_state.pt"
    torch.save(ctx.call(first.state_dict), path)
    del first  # the restart: a new loader knows only what was saved
    resumed = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(resumed.load_state_dict, torch.load(path, weights_only=False))
    after = _take(ctx, resumed, None)
    abandoned = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(abandoned.set_epoch, EPOCH)
    _take(ctx, abandoned, K)
    loaders = {
        f"a full epoch {EPOCH}": full_loader,
        f"epoch {EPOCH} resumed and finished": resumed,
        f"epoch {EPOCH} stopped after {K} batches": abandoned,
    }
    nexts = _next_epoch(ctx, loaders, full_next, EPOCH + 1)
    ctx.call(living.set_epoch, EPOCH)
    got = _take(ctx, living, None)
    if got != full:
        nexts.insert(
            0,
            f"after a full epoch {EPOCH - 1}, set_epoch({EPOCH}) gave {len(got)} ids {got[:6]}; "
            f"a fresh loader's epoch {EPOCH} gives {len(full)} ids {full[:6]}",
        )

    every = ctx.gather("ids", {"full": full, "before": before, "after": after})
    wrong = []
    for r, got in enumerate(every):
        if got["before"] + got["after"] == got["full"]:
            continue
        expected = got["full"][len(got["before"]) :]
        why = _resumed_how(got["before"], got["after"], got["full"])
        wrong.append(f"after resuming at step {K} rank {r} got {len(got['after'])} ids "
                     f"{got['after'][:6]}; expected the uninterrupted epoch's next "
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
        f"{len(dup)} ids seen twice across the restart, e.g. {dup[:4]}; expected each id "
        "once per epoch. Likely cause: the restored position is behind what was handed out"
        if dup
        else "no id seen twice across the restart",
    )
    missing = sorted(set(range(N)) - set(counts))
    ctx.check(
        "no_skip",
        not missing,
        f"{len(missing)} of {N} ids never seen across the restart, e.g. {missing[:4]}; "
        "expected every id once. Likely cause: the restored position is ahead of what this "
        "rank was handed"
        if missing
        else f"all {N} ids seen",
    )
    ctx.check(
        "next_epoch",
        not nexts,
        f"{'; '.join(nexts[:2])}. Likely cause: set_epoch does not reset the position in the "
        "epoch (the count of ids handed out), so a loader that lives across epochs starts the "
        "next one where the last one stopped"
        if nexts
        else f"set_epoch({EPOCH + 1}) starts the epoch from its beginning after a full, a "
        "resumed and an abandoned epoch",
    )

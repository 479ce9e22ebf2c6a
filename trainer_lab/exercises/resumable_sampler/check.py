"""resumable-sampler: on every rank, epoch 1 uninterrupted, then epoch 1 again stopped after K
batches, its state saved to a file and restored into a new loader; the dataset's items are their
ids, so the batches say which ids each rank saw before and after the restart.

A loader also lives across epochs: set_epoch must start the new epoch from its beginning, after
a full epoch, after a resumed one, and after one abandoned mid-way (next_epoch).

Each epoch is a new shuffle (new_order: epoch 2 differs from epoch 1), every batch but an epoch's
last holds batch_size ids (batch_shape), and a loader that was never given set_epoch (epoch 0, a
job's first start) resumes at step K like one that was (resume_without_set_epoch)."""

from collections import Counter

import torch
from torch.utils.data import Dataset

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError

N, BATCH, K, EPOCH = 40, 4, 2, 1


class Ids(Dataset):
    def __len__(self) -> int:
        return N

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.tensor(i)


def _flat(batches: list) -> list[int]:
    return [int(i) for b in batches for i in torch.as_tensor(b).reshape(-1)]


def _take(
    ctx: Ctx, loader: object, count: int | None, shapes: list[list[int]] | None = None
) -> list[int]:
    """The ids of `count` batches (all when None); each batch's id count goes to `shapes`."""

    def take() -> list:
        it = iter(loader)  # type: ignore[call-overload]
        if count is None:
            return list(it)
        return [next(it) for _ in range(count)]

    got = ctx.call(take)
    if shapes is not None:
        shapes.append([torch.as_tensor(b).reshape(-1).numel() for b in got])
    return _flat(got)


def _bad_batches(sizes: list[int]) -> bool:
    """Every batch but the last holds BATCH ids; the last holds 1 to BATCH."""
    return any(n != BATCH for n in sizes[:-1]) or bool(sizes and not 0 < sizes[-1] <= BATCH)


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


def _stop_and_resume(ctx: Ctx, cls: type, name: str, set_epoch: bool) -> tuple[list, list]:
    """Epoch 0 stopped after K batches, saved to a file and resumed in a new loader: the ids
    before and after; set_epoch(0) is called first only when `set_epoch`."""
    first = ctx.call(cls, Ids(), BATCH, seed=0)
    if set_epoch:
        ctx.call(first.set_epoch, 0)
    before = _take(ctx, first, K)
    path = ctx.scratch / name
    torch.save(ctx.call(first.state_dict), path)
    resumed = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(resumed.load_state_dict, torch.load(path, weights_only=False))
    return before, _take(ctx, resumed, None)


def _resume_without_set_epoch(ctx: Ctx, cls: type) -> None:
    """A loader never given set_epoch (a job's first start) must behave like one given
    set_epoch(0): the same ids before and after a restart at step K. (Whether that restart is
    right is matches_uninterrupted's business: this check isolates the missing set_epoch.)"""
    before, after = _stop_and_resume(ctx, cls, "loader_state_set_epoch0.pt", set_epoch=True)
    try:
        got_before, got_after = _stop_and_resume(ctx, cls, "loader_state_fresh.pt", False)
    except UserCodeError as error:
        ctx.check(
            "resume_without_set_epoch",
            False,
            f"a loader never given set_epoch raised {error}; expected it to run epoch 0 and to "
            f"save and resume it at step {K}, like a loader given set_epoch(0). Likely cause: "
            "the epoch or the position is first set in set_epoch, not in __init__",
        )
        return
    if (got_before, got_after) == (before, after):
        ctx.check(
            "resume_without_set_epoch",
            True,
            f"without set_epoch, epoch 0 stopped after {K} batches and resumed gives the same "
            "ids as with set_epoch(0)",
        )
        return
    if got_before != before:
        cause = (
            "a new loader does not start at the beginning of epoch 0 (the epoch or the position "
            "that __init__ sets is not 0)"
        )
    else:
        cause = (
            "the state saved by a loader never given set_epoch is not epoch 0 at the position "
            "handed out (the epoch that __init__ sets is not 0, or it disagrees with the "
            "sampler's)"
        )
    ctx.check(
        "resume_without_set_epoch",
        False,
        f"without set_epoch, ids {got_before[:6]} before and {len(got_after)} ids "
        f"{got_after[:6]} after the restart at step {K}; expected what a loader given "
        f"set_epoch(0) gives: {before[:6]} before and {len(after)} ids {after[:6]} after. "
        f"Likely cause: {cause}",
    )


def run(ctx: Ctx) -> None:
    cls = ctx.attr("ResumableLoader")
    shapes: list[list[int]] = []  # ids per batch: epoch 1 whole, then resumed after step K
    full_loader = ctx.call(cls, Ids(), BATCH, seed=0)
    ctx.call(full_loader.set_epoch, EPOCH)
    full = _take(ctx, full_loader, None, shapes)
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
    after = _take(ctx, resumed, None, shapes)
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
    ctx.check(
        "new_order",
        full != full_next,
        f"epoch {EPOCH} began {full[:6]}, epoch {EPOCH + 1} began {full_next[:6]}"
        + (
            ""
            if full != full_next
            else f": the same order in epoch {EPOCH + 1} as in epoch {EPOCH}; expected a new "
            "shuffle each epoch. Likely cause: set_epoch does not reach the sampler "
            "(sampler.set_epoch(epoch) not called), or the sampler does not shuffle "
            "(shuffle=False)"
        ),
    )
    bad = [sizes for sizes in shapes if _bad_batches(sizes)]
    if bad:
        cause = (
            "batch_size is not passed to the DataLoader (its default is 1)"
            if set(bad[0]) == {1}
            else "the ids are not grouped into batches of batch_size"
        )
        detail = (
            f"batches of {bad[0][:8]}{'...' if len(bad[0]) > 8 else ''} ids; expected "
            f"{BATCH} ids per batch (batch_size={BATCH}), only an epoch's last batch may hold "
            f"fewer. Likely cause: {cause}"
        )
    else:
        detail = (
            f"epoch {EPOCH}: batches of {shapes[0]} ids; after the restart: {shapes[1]} "
            f"(batch_size={BATCH})"
        )
    ctx.check("batch_shape", not bad, detail)
    _resume_without_set_epoch(ctx, cls)

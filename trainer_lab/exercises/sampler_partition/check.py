"""sampler-partition: run 2 epochs (and epoch 1 again) on every rank; the dataset's items are
their ids, so the batches say which ids each rank saw.

N is not a multiple of the world size W: the exercise pads like DistributedSampler's default
(drop_last=False), so each rank gets ceil(N / W) ids, every id is seen, and only the
W * ceil(N / W) - N padding ids are seen twice. Dropping the N % W leftover ids, or giving the
ranks different numbers of ids (so they run different numbers of steps), fails exactly_once."""

from collections import Counter

import torch
from torch.utils.data import Dataset

from trainer_lab.exercises._checker.ctx import Ctx

N, BATCH = 25, 4  # N % 2 != 0: the padding shows


class Ids(Dataset):
    def __len__(self) -> int:
        return N

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.tensor(i)


def _ids(ctx: Ctx, fn, epoch: int, state: dict, shapes: list[list[int]] | None = None) -> list[int]:
    got: list[int] = []
    sizes = []
    for batch in ctx.call(lambda: list(fn(Ids(), epoch, BATCH, state))):
        ids = [int(i) for i in torch.as_tensor(batch).reshape(-1)]
        got.extend(ids)
        sizes.append(len(ids))
    if shapes is not None:
        shapes.append(sizes)
    return got


def _bad_batches(sizes: list[int]) -> bool:
    """Every batch but the last holds BATCH ids; the last holds 1 to BATCH."""
    return any(n != BATCH for n in sizes[:-1]) or bool(sizes and not 0 < sizes[-1] <= BATCH)


def run(ctx: Ctx) -> None:
    fn = ctx.attr("epoch_batches")
    state: dict = {}
    shapes: list[list[int]] = []  # ids per batch, per epoch
    epochs = [_ids(ctx, fn, e, state, shapes) for e in (0, 1)]
    again = _ids(ctx, fn, 1, state)
    every = ctx.gather("ids", epochs)
    per_rank = -(-N // ctx.world_size)  # ceil(N / W)
    padding = per_rank * ctx.world_size - N
    problems = []
    for e in (0, 1):
        counts = Counter(i for rank_ids in every for i in rank_ids[e])
        sizes = [len(rank_ids[e]) for rank_ids in every]
        extra = sum(counts.values()) - len(counts)
        dup = sorted(i for i, c in counts.items() if c > 1)
        missing = sorted(set(range(N)) - set(counts))
        if extra > padding or any(c > 2 for c in counts.values()):
            owners = [r for r, rank_ids in enumerate(every) if dup[0] in rank_ids[e]]
            problems.append(
                f"epoch {e}: id {dup[0]} seen {counts[dup[0]]} times (ranks {owners}); {len(dup)} "
                f"ids seen more than once; expected each id once, plus at most {padding} padding "
                "id(s) seen twice. Likely cause: the ranks do not split one shared order (no "
                "DistributedSampler, or a different seed per rank)"
            )
        if missing:
            cause = (
                f"the {N % ctx.world_size} leftover id(s) of N % W are dropped (drop_last=True, "
                "or N // W ids per rank)"
                if len(missing) <= N % ctx.world_size and len(set(sizes)) == 1
                else "the ranks do not cover the whole dataset"
            )
            problems.append(
                f"epoch {e}: {len(missing)} id(s) never seen, e.g. {missing[:4]}, ranks got "
                f"{sizes} ids; expected every id, each rank padded to {per_rank}. Likely cause: "
                f"{cause}"
            )
        elif len(set(sizes)) > 1:
            problems.append(
                f"epoch {e}: the ranks got {sizes} ids; expected {per_rank} each (padded like "
                "DistributedSampler). Likely cause: the leftover ids go to some ranks only, so "
                "the ranks would run different numbers of steps (and hang in DDP)"
            )
    sizes = [[len(rank_ids[e]) for e in (0, 1)] for rank_ids in every]
    ctx.check(
        "exactly_once",
        not problems,
        problems[0] + (f" (and {len(problems) - 1} more like it)" if len(problems) > 1 else "")
        if problems
        else f"{N} ids split {sizes} (per rank, per epoch), each seen once, {padding} padded",
    )
    # a rank that sees the whole dataset fails exactly_once; its share cannot change
    shares = all(len(set(rank_ids[e])) < N for rank_ids in every for e in (0, 1))
    resplit = not shares or any(sorted(rank_ids[0]) != sorted(rank_ids[1]) for rank_ids in every)
    detail = f"epoch 0 began {epochs[0][:6]}, epoch 1 began {epochs[1][:6]}"
    if epochs[0] == epochs[1]:
        detail += (
            ": the same order every epoch; expected a new shuffle each epoch. Likely cause: "
            "sampler.set_epoch(epoch) is not called before iterating"
        )
    elif not resplit:
        detail += (
            ": every rank got the same ids in both epochs, only their order changed; expected "
            "a new split each epoch (one shuffle of the whole dataset, then split). Likely "
            "cause: the ids are dealt to the ranks once (a fixed slice per rank) and shuffled "
            "within each rank's slice"
        )
    else:
        detail += ", and the ranks' ids change between epochs"
    ctx.check("new_order", epochs[0] != epochs[1] and resplit, detail)
    ctx.check(
        "same_split_per_epoch",
        sorted(again) == sorted(epochs[1]),
        "epoch 1 run twice gave this rank the same ids"
        if sorted(again) == sorted(epochs[1])
        else f"epoch 1 run twice gave this rank different ids: {sorted(epochs[1])[:6]} vs "
        f"{sorted(again)[:6]}; expected the same ids (the split must depend on the epoch only). "
        "Likely cause: the order depends on state that changes between calls (an unseeded or "
        "shared random generator)",
    )
    bad = [(e, sizes) for e, sizes in enumerate(shapes) if _bad_batches(sizes)]
    if bad:
        e, sizes = bad[0]
        cause = (
            "batch_size is not passed to the DataLoader (its default is 1)"
            if set(sizes) == {1}
            else "the ids are not grouped into batches of batch_size"
        )
        detail = (
            f"epoch {e}: this rank's batches held {sizes[:8]}{'...' if len(sizes) > 8 else ''} "
            f"ids; expected {BATCH} ids per batch (batch_size={BATCH}), only the epoch's last "
            f"batch may hold fewer. Likely cause: {cause}"
        )
    else:
        detail = f"batches of {shapes[0]} ids in epoch 0 (batch_size={BATCH})"
    ctx.check("batch_shape", not bad, detail)

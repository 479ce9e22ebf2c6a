"""uneven-join: rank r gets 3 + 2r batches; forward calls are counted by a hook on the model."""

import time

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError
from trainer_lab.exercises._checker.kit import batches, params_digest, tiny_mlp


def run(ctx: Ctx) -> None:
    fn = ctx.attr("train_epoch")
    model = tiny_mlp()
    calls = [0]
    model.register_forward_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    mine = batches(200 + ctx.rank, 3 + 2 * ctx.rank)
    start = time.monotonic()
    try:
        ctx.call(fn, ddp, opt, mine)
        error = ""
    except UserCodeError as e:
        error = str(e)
    took = time.monotonic() - start
    ctx.check("no_hang", not error, f"finished {len(mine)} batches in {took:.1f} s" if not error
              else f"{error} after {took:.1f} s; expected every rank to finish. Likely cause: "
              "the rank with more batches waits in DDP's all-reduce for a peer that already "
              "left the loop")  # fmt: skip
    counts = ctx.gather("calls", [calls[0], len(mine), params_digest(model), bool(error)])
    short = [f"rank {r} ran {c} of its {n} batches" for r, (c, n, _, _) in enumerate(counts)
             if c != n]  # fmt: skip
    detail = f"forward calls per rank: {[c[0] for c in counts]}"
    if short:
        detail = (
            f"{'; '.join(short)}; expected every batch. Likely cause: the ranks stop at the "
            "shortest rank's count (or a batch is skipped) instead of letting the longer rank "
            "finish under Join"
        )
    ctx.check("all_batches_used", not short, detail)
    digests = [c[2] for c in counts]
    if any(c[3] for c in counts):
        ctx.check("params_in_sync", False, "not compared: the epoch did not finish (see no_hang)")
        return
    ctx.check("params_in_sync", len(set(digests)) == 1,
              "identical parameters on every rank" if len(set(digests)) == 1 else
              f"parameter digests differ across ranks: {digests}; expected identical parameters. "
              "Likely cause: the longer rank's extra steps were not all-reduced with a peer "
              "(no Join shadowing them), so only its replica moved")  # fmt: skip

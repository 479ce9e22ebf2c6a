"""What each exercise's starter and known-wrong answers must fail: the exact set of failing
checks, and a phrase the evidence must contain (so the message points at the problem)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

WRONG_DIR = Path(__file__).with_name("wrong")


@dataclass(frozen=True)
class Expect:
    failing: frozenset[str]
    says: str  # in the detail of the first failing check


def fails(*names: str, says: str) -> Expect:
    return Expect(frozenset(names), says)


# exercise -> what the untouched starter fails
STARTER: dict[str, Expect] = {
    "ddp-by-hand": fails("params_in_sync", "matches_reference", says="digests differ"),
    "sampler-partition": fails("exactly_once", says="seen 2 times"),
    "rank0-logging": fails("no_hang", "rank0_only", "mean_over_ranks", says="not every rank calls"),
    "fix-hang": fails("no_hang", "ranks_agree", "uses_the_mean", says="never joins"),
    "uneven-join": fails(
        "no_hang", "all_batches_used", "params_in_sync", says="already left the loop"
    ),
    "grad-accum-no-sync": fails(
        "matches_big_batch", "one_allreduce_per_step", says="not divided by the number"
    ),
    "zero1-sharded-optimizer": fails("state_sharded", says="keeps the whole state"),
    "first-nan": fails("names_the_first", says="the first non-finite output came from"),
    "activation-checkpointing": fails("saves_less", "recomputes", says="still stored"),
    "grad-scaler": fails(
        "skips_overflow", "scale_backs_off", "matches_reference", says="scaler.step(optimizer)"
    ),
}

# exercise -> {file in wrong/: what it fails}
WRONG: dict[str, dict[str, Expect]] = {
    "ddp-by-hand": {"ddp_by_hand_sum.py": fails("matches_reference", says="the average?")},
    "sampler-partition": {
        "sampler_partition_no_set_epoch.py": fails("new_order", says="the same order every")
    },
    "rank0-logging": {
        "rank0_logging_all_print.py": fails("rank0_only", "mean_over_ranks", says="rank 1 printed")
    },
    "fix-hang": {"fix_hang_votes.py": fails("uses_the_mean", says="mean 1.00 < 1.2 is True")},
    "uneven-join": {"uneven_join_truncate.py": fails("all_batches_used", says="ran 3 of its 5")},
    "grad-accum-no-sync": {
        "grad_accum_no_scale.py": fails("matches_big_batch", says="not divided by the number")
    },
    "zero1-sharded-optimizer": {
        "zero1_no_broadcast.py": fails("params_in_sync", "matches_adam", says="broadcast the")
    },
    "first-nan": {"first_nan_last.py": fails("names_the_first", says="came from 'block.2'")},
    "activation-checkpointing": {
        "ckpt_no_grad.py": fails(
            "same_gradients", "saves_less", "recomputes", says="does not require grad"
        )
    },
    "grad-scaler": {
        "grad_scaler_no_update.py": fails(
            "skips_overflow", "scale_backs_off", "matches_reference", says="since the last update()"
        )
    },
}

"""What each exercise's starter and known-wrong answers must fail: the exact set of failing
checks, and a phrase the evidence must contain (so the message points at the problem)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

WRONG_DIR = Path(__file__).with_name("wrong")
RIGHT_DIR = Path(__file__).with_name("right")


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
    "fsdp-per-block": fails("one_block_at_a_time", says="gathered at once"),
    "bucketed-allreduce": fails(
        "bucket_count", "overlaps_backward", says="one all-reduce per parameter"
    ),
    "first-nan": fails("names_the_first", says="the first non-finite output came from"),
    "resumable-sampler": fails("matches_uninterrupted", "no_replay", says="started the epoch over"),
    "full-state-checkpoint": fails(
        "losses_match",
        "optimizer_state",
        "lr_continues",
        "scaler_continues",
        "sampler_resumes",
        "rng_continues",
        says="already differs",
    ),
    "atomic-checkpoint": fails("survives_crash", says="it read the torn file"),
    "phase-timing": fails("waits_for_the_device", says="before the device finished"),
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
    "fsdp-per-block": {
        "fsdp_per_block_no_root.py": fails(
            "one_block_at_a_time", "matches_reference", says="wrap the root last"
        )
    },
    "bucketed-allreduce": {
        "bucketed_allreduce_sum.py": fails("matches_reference", says="not the average")
    },
    "first-nan": {"first_nan_last.py": fails("names_the_first", says="came from 'block.2'")},
    "resumable-sampler": {
        "resumable_sampler_global_offset.py": fails(
            "matches_uninterrupted", "no_skip", says="jumped past samples"
        )
    },
    "full-state-checkpoint": {
        "full_state_checkpoint_no_rng.py": fails(
            "losses_match", "rng_continues", says="the dropout masks (RNG state)"
        ),
        "full_state_checkpoint_no_scaler.py": fails(
            "losses_match", "scaler_continues", says="the loss scale (GradScaler)"
        ),
        "full_state_checkpoint_no_sampler.py": fails(
            "losses_match", "sampler_resumes", says="the batches' ids (sampler position)"
        ),
    },
    "atomic-checkpoint": {
        "atomic_checkpoint_delete_first.py": fails(
            "survives_crash", says="no complete checkpoint is left"
        ),
        "atomic_checkpoint_stale_staging.py": fails(
            "saves_after_crash", says="what the killed save left behind is in the way"
        ),
    },
    "phase-timing": {
        "phase_timing_sync_at_end.py": fails(
            "excludes_other_work", says="input copy queued before the phase began"
        ),
        "phase_timing_always_sync.py": fails(
            "cpu_times_phases", says="Torch not compiled with CUDA enabled"
        ),
    },
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

# exercise -> other right answers (another correct approach than the model answer's)
RIGHT: dict[str, list[str]] = {
    "phase-timing": ["phase_timing_events.py"],
}

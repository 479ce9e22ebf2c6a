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
        "no_hang",
        "all_batches_used",
        "params_in_sync",
        "matches_reference",
        says="already left the loop",
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
    "atomic-checkpoint": fails(
        "survives_crash", "durable_commit", "fresh_start", says="it read the torn file"
    ),
    "phase-timing": fails("waits_for_the_device", says="before the device finished"),
    "activation-checkpointing": fails("saves_less", "recomputes", says="still stored"),
    "grad-scaler": fails(
        "skips_overflow", "scale_backs_off", "matches_reference", says="scaler.step(optimizer)"
    ),
}

# exercise -> {file in wrong/: what it fails}
WRONG: dict[str, dict[str, Expect]] = {
    "ddp-by-hand": {
        "ddp_by_hand_sum.py": fails("matches_reference", says="a sum over ranks, not the average")
    },
    "sampler-partition": {
        "sampler_partition_no_set_epoch.py": fails("new_order", says="the same order every"),
        "sampler_partition_fixed_split.py": fails(
            "new_order", says="every rank got the same ids in both epochs"
        ),
        "sampler_partition_drop_last.py": fails(
            "exactly_once", says="leftover id(s) of N % W are dropped"
        ),
        "sampler_partition_uneven.py": fails("exactly_once", says="the ranks got [13, 12] ids"),
        "sampler_partition_no_batch_size.py": fails(
            "batch_shape", says="batch_size is not passed to the DataLoader"
        ),
    },
    "rank0-logging": {
        "rank0_logging_all_print.py": fails("rank0_only", "mean_over_ranks", says="rank 1 printed"),
        "rank0_logging_local_rank.py": fails(
            "rank0_only", says="guarded by the node-local rank (LOCAL_RANK)"
        ),
        "rank0_logging_reduce_in_place.py": fails(
            "loss_unchanged", says="ran in place on the caller's tensor"
        ),
        "rank0_logging_scaled_own.py": fails(
            "mean_over_ranks", says="the printed value is not the mean of the ranks' losses"
        ),
    },
    "fix-hang": {
        "fix_hang_votes.py": fails("uses_the_mean", says="mean 1.00 < 1.2 is True"),
        "fix_hang_any.py": fails("uses_the_mean", says="any rank's loss below the threshold"),
        "fix_hang_rank0.py": fails("uses_the_mean", says="rank 0's own loss"),
        "fix_hang_at_or_below.py": fails("uses_the_mean", says="mean 1.00 < 1.0 is False"),
    },
    "uneven-join": {
        "uneven_join_truncate.py": fails(
            "all_batches_used", "matches_reference", says="ran 3 of its 5"
        ),
        "uneven_join_no_zero_grad.py": fails(
            "matches_reference", says="optimizer.zero_grad() is not called"
        ),
        "uneven_join_no_step.py": fails("matches_reference", says="optimizer.step() is not called"),
    },
    "grad-accum-no-sync": {
        "grad_accum_no_scale.py": fails("matches_big_batch", says="not divided by the number"),
        "grad_accum_len_x.py": fails("matches_big_batch", says="divided by the micro-batch's size"),
        "grad_accum_sync_first.py": fails(
            "matches_big_batch", "params_in_sync", says="see params_in_sync"
        ),
    },
    "zero1-sharded-optimizer": {
        "zero1_no_broadcast.py": fails(
            "params_in_sync", "matches_adam", says="share never reaches the others"
        ),
        "zero1_round_robin.py": fails("state_sharded", says="the state is split, but unevenly"),
    },
    "fsdp-per-block": {
        "fsdp_per_block_no_root.py": fails(
            "one_block_at_a_time", "matches_reference", says="wrap the root last"
        ),
        "fsdp_per_block_head_not_root.py": fails(
            "one_block_at_a_time", says="with the root model not wrapped, every block"
        ),
        "fsdp_per_block_no_reshard.py": fails(
            "one_block_at_a_time", says="reshard_after_forward=False keeps them gathered"
        ),
    },
    "bucketed-allreduce": {
        "bucketed_allreduce_sum.py": fails("matches_reference", says="not the average"),
        "bucketed_allreduce_exact_fill_split.py": fails(
            "bucket_count", says="bytes in a row fit in one bucket, so a bucket was launched"
        ),
    },
    "first-nan": {
        "first_nan_last.py": fails("names_the_first", "hooks_removed", says="came from 'block.2'"),
        "first_nan_remove_in_else.py": fails("hooks_removed", says="not after one that raises"),
        "first_nan_isinf_only.py": fails(
            "names_the_first", says="only inf is tested (torch.isinf)"
        ),
        "first_nan_global_hook.py": fails("hooks_removed", says="a global hook"),
        "first_nan_named_order.py": fails(
            "names_the_first", says="'res.out' only saw non-finite inputs"
        ),
    },
    "resumable-sampler": {
        "resumable_sampler_global_offset.py": fails(
            "matches_uninterrupted", "no_skip", says="jumped past 8 ids it was never given"
        ),
        "resumable_sampler_epoch_keeps_position.py": fails(
            "next_epoch", says="set_epoch does not reset the position"
        ),
        "resumable_sampler_replay_batch.py": fails(
            "matches_uninterrupted", "no_replay", says="replayed the last 4 ids"
        ),
        "resumable_sampler_same_order.py": fails(
            "new_order", says="set_epoch does not reach the sampler"
        ),
        "resumable_sampler_no_batch_size.py": fails(
            "batch_shape", says="batch_size is not passed to the DataLoader"
        ),
        "resumable_sampler_state_in_set_epoch.py": fails(
            "resume_without_set_epoch", says="first set in set_epoch, not in __init__"
        ),
    },
    "full-state-checkpoint": {
        "full_state_checkpoint_no_rng.py": fails(
            "losses_match", "rng_continues", says="the dropout masks (RNG state)"
        ),
        "full_state_checkpoint_no_scaler.py": fails(
            "losses_match", "scaler_continues", says="the loss scale (GradScaler)"
        ),
        "full_state_checkpoint_no_scheduler.py": fails(
            "losses_match", "lr_continues", says="the LR (scheduler)"
        ),
        "full_state_checkpoint_no_sampler.py": fails(
            "losses_match", "sampler_resumes", says="the batches' ids (sampler position)"
        ),
    },
    "atomic-checkpoint": {
        "atomic_checkpoint_delete_first.py": fails(
            "survives_crash",
            "durable_commit",
            "fresh_start",
            says="no complete checkpoint is left",
        ),
        "atomic_checkpoint_stale_staging.py": fails(
            "saves_after_crash",
            "durable_commit",
            "fresh_start",
            says="what the killed save left behind is in the way",
        ),
        "atomic_checkpoint_copy_commit.py": fails(
            "survives_crash",
            "durable_commit",
            says="(shutil.copyfile step-11.pt.tmp -> step-11.pt)",
        ),
        "atomic_checkpoint_pointer_in_place.py": fails(
            "survives_crash",
            "durable_commit",
            says="open LATEST for writing, then latest() raised",
        ),
        "atomic_checkpoint_string_sort.py": fails(
            "roundtrip",
            "survives_crash",
            "saves_after_crash",
            "durable_commit",
            says="compared as strings ('step-10' < 'step-9')",
        ),
        "atomic_checkpoint_no_fsync.py": fails("durable_commit", says="but never fsynced it"),
        "atomic_checkpoint_no_flush.py": fails("durable_commit", says="when it held 0 of its"),
        "atomic_checkpoint_no_dir_fsync.py": fails(
            "durable_commit", says="never fsynced the directory after it"
        ),
        "atomic_checkpoint_marker_no_dir_fsync.py": fails(
            "durable_commit", says="committed with create step-2.done but never fsynced the"
        ),
        "atomic_checkpoint_fd_leak.py": fails("no_fd_leak", says="50 more file descriptors open"),
        "atomic_checkpoint_no_dir_check.py": fails(
            "fresh_start", says="on a directory that does not exist"
        ),
        "atomic_checkpoint_max_of_nothing.py": fails(
            "fresh_start", says="on an empty directory raised"
        ),
    },
    "phase-timing": {
        "phase_timing_sync_at_end.py": fails(
            "excludes_other_work", says="input copy queued before the phase is still running"
        ),
        "phase_timing_laps.py": fails(
            "cpu_times_phases",
            "excludes_other_work",
            says="time outside the phase is charged to",
        ),
        "phase_timing_always_sync.py": fails(
            "cpu_times_phases", says="Torch not compiled with CUDA enabled"
        ),
        "phase_timing_last_step.py": fails(
            "cpu_times_phases", "waits_for_the_device", says="reading is lost or overwritten"
        ),
        "phase_timing_machine_guard.py": fails(
            "cpu_times_phases", says="guarded by whether the machine has a device"
        ),
        "phase_timing_import_guard.py": fails(
            "waits_for_the_device", says="no device call in the whole CUDA run"
        ),
    },
    "activation-checkpointing": {
        "ckpt_no_grad.py": fails(
            "same_gradients", "saves_less", "recomputes", says="does not require grad"
        ),
        "activation_checkpointing_function_no_rng.py": fails(
            "same_gradients", "saves_less", says="draws other dropout masks than the forward"
        ),
        "ckpt_function_reentrant.py": fails(
            "same_gradients", "saves_less", says="with one that does not (raw data"
        ),
    },
    "grad-scaler": {
        "grad_scaler_no_update.py": fails(
            "skips_overflow", "scale_backs_off", "matches_reference", says="since the last update()"
        ),
        "grad_scaler_no_scale.py": fails(
            "skips_overflow",
            "scale_backs_off",
            "matches_reference",
            says="without scaler.scale(loss) before the backward",
        ),
        "grad_scaler_direct_step.py": fails(
            "skips_overflow", "matches_reference", says="optimizer.step() ran on the overflowed"
        ),
    },
}

# exercise -> other right answers (another correct approach than the model answer's)
RIGHT: dict[str, list[str]] = {
    "phase-timing": ["phase_timing_events.py", "phase_timing_accelerator.py"],
    "fix-hang": ["fix_hang_all_gather.py"],
    "atomic-checkpoint": [
        "atomic_checkpoint_done_marker.py",
        "atomic_checkpoint_fdatasync.py",
        "atomic_checkpoint_bound_sync.py",
    ],
    "first-nan": ["first_nan_global_hook.py"],
    "resumable-sampler": ["resumable_sampler_own_shuffle.py"],
    "sampler-partition": ["sampler_partition_manual.py"],
    "zero1-sharded-optimizer": [
        "zero1_torch_zero.py",
        "zero1_hand_adam.py",
        "zero1_module_state.py",
        "zero1_flat_master.py",
    ],
    "grad-accum-no-sync": ["grad_accum_sum_loss.py"],
    "fsdp-per-block": ["fsdp_per_block_policy.py"],
    "grad-scaler": ["grad_scaler_manual_check.py"],
    "full-state-checkpoint": ["full_state_checkpoint_bytes.py"],
    "ddp-by-hand": ["ddp_by_hand_flat.py"],
    "rank0-logging": ["rank0_logging_reduce.py"],
    "uneven-join": ["uneven_join_ddp_join.py", "uneven_join_extra_forward.py"],
    "activation-checkpointing": ["activation_checkpointing_function.py"],
    "bucketed-allreduce": [
        "bucketed_allreduce_planned.py",
        "bucketed_allreduce_bound_partial.py",
        "bucketed_allreduce_forward_plan.py",
        "bucketed_allreduce_funcol.py",
    ],
}

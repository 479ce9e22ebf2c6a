"""The red team's answers (issue 35), graded for real: written from the printed exercise texts
only, never the checkers' source. Each right_*.py must pass; each wrong_*.py / gaming one must
fail the check named here, with the phrase that names its cause in that check's detail.

The answers live in redteam/<exercise>/ as written (ruff leaves them alone). One test per
answer, grouped by exercise; every file there must be listed below, so none is skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.exercises.catalogue import EXERCISES
from trainer_lab.exercises.runner import check_exercise

REDTEAM = Path(__file__).with_name("redteam")

# exercise -> {wrong answer: (the check it must fail, a phrase of that check's detail)}
WRONG: dict[str, dict[str, tuple[str, str]]] = {
    "activation-checkpointing": {
        "wrong_no_rng_preserve.py": ("same_gradients", "draws other dropout masks"),
        "wrong_nograd_detach.py": ("same_gradients", "the block runs without autograd"),
        "wrong_reentrant_no_input_grad.py": ("same_gradients", "(use_reentrant=True"),
    },
    "atomic-checkpoint": {
        "wrong_dirsync_before_rename.py": ("durable_commit", "fsynced the directory only before"),
        "wrong_fd_leak.py": ("no_fd_leak", "50 more file descriptors open"),
        "wrong_fsync_parent_dir.py": ("durable_commit", "the checkpoint directory's parent"),
        "wrong_latest_reads_tmp.py": ("survives_crash", "it read the torn file"),
        "wrong_lexicographic_latest.py": ("roundtrip", "compared as strings"),
        "wrong_no_data_sync.py": ("durable_commit", "but never fsynced it"),
    },
    "bucketed-allreduce": {
        "wrong_drop_tail_bucket.py": ("bucket_count", "a bucket not launched"),
        "wrong_late_binding_closure.py": ("bucket_count", "a bucket not launched"),
        "wrong_launch_in_wait.py": ("overlaps_backward", "launched from wait()"),
        "wrong_no_copy_back.py": ("matches_reference", "its result not copied back"),
        "wrong_offbyone_overfill.py": ("bucket_count", "over the 1100-byte limit"),
    },
    "ddp-by-hand": {
        "wrong_async_no_wait.py": ("params_in_sync", "digests differ across ranks"),
        "wrong_gaming_grader_env.py": ("params_in_sync", "digests differ across ranks"),
        "wrong_scale_rank0_only.py": ("params_in_sync", "digests differ across ranks"),
        "wrong_skip_bias.py": ("params_in_sync", "digests differ across ranks"),
    },
    "first-nan": {
        "wrong_gaming_param_scan.py": ("names_the_first", "no module's output was seen as"),
        "wrong_isnan_only.py": ("names_the_first", "only NaN is tested (torch.isnan)"),
        "wrong_no_finally.py": ("hooks_removed", "not after one that raises"),
        "wrong_registration_order.py": ("names_the_first", "'' is the whole model"),
    },
    "fix-hang": {
        "wrong_le_threshold.py": ("uses_the_mean", "mean <= threshold"),
        "wrong_rank0_decides.py": ("uses_the_mean", "rank 0's own loss"),
        "wrong_unanimous_vote.py": ("uses_the_mean", "a unanimous vote"),
    },
    "fsdp-per-block": {
        "wrong_blocks_only.py": ("one_block_at_a_time", "wrap the root last"),
        "wrong_no_reshard.py": ("one_block_at_a_time", "reshard_after_forward=False"),
        "wrong_root_first.py": ("sharded_at_rest", "fully_shard(model) ran before fully_shard"),
    },
    "full-state-checkpoint": {
        "wrong_no_python_random.py": ("rng_continues", "RNG states are not restored"),
        "wrong_no_sampler.py": ("sampler_resumes", "the sampler started the epoch over"),
        "wrong_no_scaler.py": ("scaler_continues", "GradScaler's state is not restored"),
        "wrong_no_torch_rng.py": ("rng_continues", "RNG states are not restored"),
    },
    "grad-accum-no-sync": {
        "wrong_all_no_sync.py": ("one_allreduce_per_step", "every backward ran under no_sync"),
        "wrong_hardcoded_k.py": ("matches_big_batch", "not the mean over all micro-batches"),
        "wrong_no_scaling.py": ("matches_big_batch", "not divided by the number"),
        "wrong_sync_every_but_first.py": ("one_allreduce_per_step", "ran outside no_sync()"),
    },
    "grad-scaler": {
        "wrong_manual_step.py": ("skips_overflow", "optimizer.step() ran on the overflowed"),
        "wrong_no_update.py": ("skips_overflow", "scaler.update() is not called"),
    },
    # the phrases of phase-timing are its owner's (timing helper): only the failing check here
    "phase-timing": {
        "wrong_events_no_sync.py": ("waits_for_the_device", ""),
        "wrong_is_available_guard.py": (
            "cpu_times_phases",
            "guarded by whether the machine has a device",
        ),
        "wrong_sync_end_only.py": ("excludes_other_work", ""),
    },
    "rank0-logging": {
        "wrong_gaming_hardcoded_offset.py": ("mean_over_ranks", "rank 0's own loss plus a"),
        "wrong_inplace_caller_loss.py": ("loss_unchanged", "loss.detach(), which shares"),
        "wrong_local_loss_barrier.py": ("mean_over_ranks", "rank 0 prints its own loss"),
        "wrong_local_rank_guard.py": ("rank0_only", "guarded by the node-local rank"),
    },
    "resumable-sampler": {
        "wrong_cursor_after_yield.py": ("no_replay", "behind what was handed out"),
        "wrong_epoch_independent.py": ("new_order", "set_epoch does not reach the sampler"),
        "wrong_set_epoch_keeps_cursor.py": ("next_epoch", "set_epoch does not reset"),
        "wrong_units_mismatch.py": ("no_skip", "ahead of what this rank was handed"),
    },
    "sampler-partition": {
        "wrong_drop_last.py": ("exactly_once", "leftover id(s) of N % W are dropped"),
        "wrong_no_set_epoch.py": ("new_order", "set_epoch(epoch) is not called"),
        "wrong_per_rank_seed.py": ("exactly_once", "a different seed per rank"),
    },
    "uneven-join": {
        "wrong_join_after_loop.py": ("no_hang", "Join's own all-reduce"),
        "wrong_truncate_to_min.py": ("all_batches_used", "stop at the shortest rank's count"),
    },
    "zero1-sharded-optimizer": {
        "wrong_allreduce_params.py": ("matches_adam", "the update is not Adam's"),
        "wrong_full_state_every_rank.py": ("state_sharded", "every rank keeps the whole state"),
        "wrong_gaming_hidden_state.py": ("state_sharded", "every rank keeps the whole state"),
        "wrong_roundrobin_imbalanced.py": ("state_sharded", "the state is split, but unevenly"),
        "wrong_zero_grad_own_shard.py": ("matches_adam", "the update is not Adam's"),
    },
}

ANSWERS = sorted((d.name, f.name) for d in REDTEAM.iterdir() if d.is_dir() for f in d.glob("*.py"))
RIGHT_CASES = [(name, file) for name, file in ANSWERS if file.startswith("right_")]
WRONG_CASES = [(name, file) for name in sorted(WRONG) for file in sorted(WRONG[name])]


def _details(result: dict) -> dict[str, str]:
    return {
        c["name"]: ("PASS " if c["passed"] else "FAIL ") + c["detail"] for c in result["checks"]
    }


def test_every_answer_is_listed_and_names_a_real_check() -> None:
    assert {d.name for d in REDTEAM.iterdir() if d.is_dir()} == set(EXERCISES)
    listed = set(RIGHT_CASES) | set(WRONG_CASES)
    assert set(ANSWERS) == listed, set(ANSWERS) ^ listed
    for name, files in WRONG.items():
        for check, _ in files.values():
            assert check in EXERCISES[name].check_names(), (name, check)


@pytest.mark.lab
@pytest.mark.parametrize(("name", "file"), RIGHT_CASES)
def test_a_right_answer_passes(name: str, file: str, tmp_path: Path) -> None:
    result = check_exercise(EXERCISES[name], REDTEAM / name / file, tmp_path)
    assert result["status"] == "ok", _details(result)


@pytest.mark.lab
@pytest.mark.parametrize(("name", "file"), WRONG_CASES)
def test_a_wrong_answer_fails_its_check_naming_the_cause(
    name: str, file: str, tmp_path: Path
) -> None:
    check, says = WRONG[name][file]
    result = check_exercise(EXERCISES[name], REDTEAM / name / file, tmp_path)
    found = next(c for c in result["checks"] if c["name"] == check)
    assert result["status"] == "failed", _details(result)
    assert not found["passed"], _details(result)
    assert says in found["detail"], _details(result)

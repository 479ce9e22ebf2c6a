"""The FSDP2 prompt's checks on fabricated harness records (no runs): a relaunch at W=3 is
placed by the whole model's norm over its shards, its global batches are compared with the
uninterrupted run's at the step it resumed from, a root-only fully_shard shows in the backward's
collectives, and a save by rank 0 alone is not a sharded checkpoint; a backward must reduce each
block's gradient (gradient-sized, not any collective), a shard counts when DCP wrote it, and an
asynchronous save belongs to the step that began it and is no restart point before it ends."""

from __future__ import annotations

import json
import math
from pathlib import Path

from trainer_lab.grading.prompts.checks_fsdp2_prompt import (
    BLOCK_PARAMS,
    BLOCKS,
    DATASET_SIZE,
    GLOBAL_BATCH,
    every_rank_writes,
    newest_complete_at_kill,
    once_per_epoch,
    per_block,
    reshard_checks,
    resumed_from,
)
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun

PER_EPOCH = DATASET_SIZE // GLOBAL_BATCH
ROOT_PARAMS = 266  # the input and output layers' gradient, padded at W=2
PER_BLOCK = [BLOCK_PARAMS] * BLOCKS + [ROOT_PARAMS]  # a per-block backward's reduces


def whole_norm(step: int) -> float:
    """The uninterrupted run's whole-model norm after `step` (0: the initial model)."""
    return 10.0 + 0.5 * step


def global_batch(step: int) -> list[int]:
    """Step s's samples (from 1): a rotating permutation per epoch."""
    epoch, k = divmod(step - 1, PER_EPOCH)
    order = [(i * 7 + epoch) % DATASET_SIZE for i in range(DATASET_SIZE)]
    return order[k * GLOBAL_BATCH : (k + 1) * GLOBAL_BATCH]


def summary(norm: float) -> dict:
    return {"norm": norm, "digest": f"{norm:.9f}", "numel": 10, "sharded": True}


def fabricate(
    tmp_path: Path,
    name: str,
    world: int,
    first: int,
    steps: int,
    *,
    ops: int = 7,
    reduces: list[int] | None = PER_BLOCK,
    batch=global_batch,
    drift: float = 0.0,
    killed: bool = False,
) -> ScriptRun:
    """A finished run at `world` ranks that starts from the uninterrupted run's model after
    step `first` and makes `steps` steps, each rank holding an equal part of the squared norm,
    reading its 1/W of `batch(step)` for each step; `drift` is added to every norm after the
    first step."""
    run_dir = tmp_path / name
    observe = run_dir / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    for rank in range(world):
        records, reads = [], []
        for j in range(1, steps + 1):
            pre = whole_norm(first + j - 1) + (drift if j > 1 else 0.0)
            post = whole_norm(first + j) + drift
            records.append(
                {
                    "pstep": j,
                    "pre": summary(pre / math.sqrt(world)),
                    "post": summary(post / math.sqrt(world)),
                    "grad": summary(1.0),
                    "comm": {"ops": ops, "elements": 100, "rows": GLOBAL_BATCH // world},
                }
            )
            if reduces:
                records[-1]["comm"]["reduces"] = reduces
            ids = batch(first + j)
            share = len(ids) // world
            reads += [{"pstep": j - 1, "id": i} for i in ids[rank * share : (rank + 1) * share]]
        (observe / protocol.steps_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in records)
        )
        (observe / protocol.fetch_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in reads)
        )
    if killed:
        (observe / protocol.saves_file(0)).write_text(json.dumps({"event": "killed"}) + "\n")
    launch = ScriptLaunch(name, Path("train.py"), (), world, run_dir, tmp_path / "ckpt", 60.0)
    return ScriptRun(launch, "ok", 0, 1.0)


def verdicts(checks) -> dict[str, bool]:
    return {c["name"]: c["passed"] for c in checks}


def test_a_relaunch_at_w3_is_placed_by_the_whole_models_norm(tmp_path):
    reference = fabricate(tmp_path, "train", 2, 0, 20)
    assert resumed_from(reference, fabricate(tmp_path, "at12", 3, 12, 8)) == 12
    assert resumed_from(reference, fabricate(tmp_path, "at8", 3, 8, 12)) == 8
    assert resumed_from(reference, fabricate(tmp_path, "elsewhere", 3, 12, 8, drift=0.01)) == 12
    fresh = fabricate(tmp_path, "fresh", 3, 0, 20)
    assert resumed_from(reference, fresh) == 0


def test_a_correct_reshard_passes_and_an_older_checkpoint_fails_only_resumes_newest(tmp_path):
    reference = fabricate(tmp_path, "train", 2, 0, 20)
    killed = fabricate(tmp_path, "kill", 2, 0, 13, killed=True)
    good = reshard_checks(reference, killed, fabricate(tmp_path, "resume", 3, 12, 8), 12)
    assert all(verdicts(good).values()), good
    older = reshard_checks(reference, killed, fabricate(tmp_path, "older", 3, 8, 12), 12)
    assert verdicts(older) == {
        "reshard.resumes_newest": False,
        "reshard.global_batch": True,
        "reshard.continues": True,
    }
    assert "after step 8" in older[0]["detail"] and "string order" in older[0]["detail"]
    crashed = fabricate(tmp_path, "crashed", 3, 8, 4)
    crashed.status, crashed.returncode = "error", 1
    checks = reshard_checks(reference, killed, crashed, 12)
    assert "after step 8" in checks[0]["detail"] and "string order" in checks[0]["detail"]


def test_a_per_rank_batch_kept_at_w3_fails_the_global_batch(tmp_path):
    reference = fabricate(tmp_path, "train", 2, 0, 20)
    killed = fabricate(tmp_path, "kill", 2, 0, 13, killed=True)

    def grown(step: int) -> list[int]:  # 6 per rank at W=3: 18 a step
        return [*global_batch(step), *global_batch(step + 1)[:6]]

    checks = reshard_checks(reference, killed, fabricate(tmp_path, "r", 3, 12, 8, batch=grown), 12)
    assert not verdicts(checks)["reshard.global_batch"]
    assert "per-rank batch kept at W=3" in checks[1]["detail"]
    assert "read per step" in checks[1]["detail"]


def test_a_relaunch_whose_model_drifts_fails_continues(tmp_path):
    reference = fabricate(tmp_path, "train", 2, 0, 20)
    killed = fabricate(tmp_path, "kill", 2, 0, 13, killed=True)
    drifting = fabricate(tmp_path, "resume", 3, 12, 8, drift=0.01)
    checks = reshard_checks(reference, killed, drifting, 12)
    assert verdicts(checks) == {
        "reshard.resumes_newest": True,
        "reshard.global_batch": True,
        "reshard.continues": False,
    }
    assert "optimizer state not saved" in checks[2]["detail"]
    unkilled = fabricate(tmp_path, "nokill", 2, 0, 20)
    assert not any(verdicts(reshard_checks(reference, unkilled, drifting, 12)).values())


def test_root_only_fully_shard_shows_one_collective_per_backward(tmp_path):
    ok, detail = per_block(fabricate(tmp_path, "blocks", 2, 0, 4, ops=7))
    assert ok, detail
    ok, detail = per_block(fabricate(tmp_path, "root", 2, 0, 4, ops=1, reduces=[2210]))
    assert not ok and "fully_shard on the root only" in detail


def test_collectives_that_carry_no_blocks_gradient_do_not_make_a_backward_per_block(tmp_path):
    # root-only fully_shard (one reduce of the whole model) padded with a one-element
    # all_reduce per Block: enough collectives, no block's gradient among them
    dummies = fabricate(tmp_path, "dummies", 2, 0, 4, ops=4, reduces=[1, 1, 1, 2210])
    ok, detail = per_block(dummies)
    assert not ok, detail
    assert "rank 0: 0, rank 1: 0 (expected 3)" in detail
    assert "no reduce-scatter of each block's gradient" in detail
    # block-sized dummies beside the whole model's reduce: one unit still holds every block
    sized = fabricate(tmp_path, "sized", 2, 0, 4, ops=7, reduces=[BLOCK_PARAMS] * 3 + [2210])
    ok, detail = per_block(sized)
    assert not ok and "the largest reduce 2210 elements" in detail
    # two blocks in one unit: one block's reduce missing
    pair = fabricate(tmp_path, "pair", 2, 0, 4, ops=7, reduces=[BLOCK_PARAMS, 914, 1, 1])
    assert not per_block(pair)[0]


def test_a_backward_whose_collectives_filled_the_recorder_is_not_judged_by_size(tmp_path):
    run = fabricate(tmp_path, "full", 2, 0, 2, ops=7, reduces=[1])
    for rank in run.ranks():
        path = run.observe_dir / protocol.steps_file(rank)
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            record["comm"]["elements"] = -1
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    ok, detail = per_block(run)
    assert ok and "reduces of one block" not in detail, detail


def test_every_epoch_must_read_each_sample_once(tmp_path):
    ok, detail = once_per_epoch(fabricate(tmp_path, "good", 2, 0, 10))
    assert ok, detail

    def same_on_both_ranks(step: int) -> list[int]:
        half = global_batch(step)[: GLOBAL_BATCH // 2]
        return half + half

    ok, detail = once_per_epoch(fabricate(tmp_path, "dup", 2, 0, 10, batch=same_on_both_ranks))
    assert not ok and "some twice" in detail


def test_a_save_by_rank_0_alone_is_not_a_sharded_checkpoint(tmp_path):
    run = fabricate(tmp_path, "train", 2, 0, 4)
    (tmp_path / "ckpt" / "step-4").mkdir(parents=True)

    (tmp_path / "ckpt" / "step-4" / ".metadata").write_bytes(DCP_METADATA_BYTES)
    wrote(run, 0, "step-4/__0_0.distcp")
    wrote(run, 0, "step-4/.metadata.tmp")
    ok, detail = every_rank_writes(run, 4)
    assert not ok and "rank 1: 0 shard files" in detail and "rank 0 gathers" in detail
    wrote(run, 1, "step-4/__1_0.distcp")
    ok, detail = every_rank_writes(run, 4)
    assert ok, detail


# the head of a .metadata DCP writes (pickle.dumps of its Metadata, never unpickled here)
DCP_METADATA_BYTES = (
    b"\x80\x04\x95\x91\x00\x00\x00\x00\x00\x00\x00\x8c%torch.distributed.checkpoint.metadata"
)


def wrote(run: ScriptRun, rank: int, path: str, **record: object) -> None:
    """Record a file written into the checkpoint dir by torch.distributed.checkpoint (dcp) in
    the save after step 4, unless `record` says otherwise."""
    line = {"event": "write", "path": path, "pstep": 4, "origin": 4, "dcp": True, **record}
    with open(run.observe_dir / protocol.saves_file(rank), "a") as f:
        f.write(json.dumps(line) + "\n")


def dcp_run(tmp_path: Path, name: str = "train") -> ScriptRun:
    run = fabricate(tmp_path, name, 2, 0, 4)
    (tmp_path / "ckpt" / "step-4").mkdir(parents=True, exist_ok=True)
    (tmp_path / "ckpt" / "step-4" / ".metadata").write_bytes(DCP_METADATA_BYTES)
    return run


def test_files_named_like_dcp_shards_that_the_script_wrote_are_not_a_dcp_save(tmp_path):
    run = dcp_run(tmp_path)
    for rank in (0, 1):  # a full state torch.saved under DCP's names, a .metadata of its own
        wrote(run, rank, f"step-4/__{rank}_0.distcp", how="torch.save", dcp=False)
    wrote(run, 0, "step-4/.metadata.tmp", how="open", dcp=False)
    ok, detail = every_rank_writes(run, 4)
    assert not ok, detail
    assert "rank 0 wrote 1 .distcp files itself (torch.save: step-4/__0_0.distcp)" in detail
    assert "not a DCP save" in detail


def test_a_metadata_that_is_not_dcps_or_one_per_rank_fails(tmp_path):
    run = dcp_run(tmp_path)
    for rank in (0, 1):
        wrote(run, rank, f"step-4/__{rank}_0.distcp")
    wrote(run, 0, "step-4/.metadata.tmp")
    assert every_rank_writes(run, 4)[0]
    (tmp_path / "ckpt" / "step-4" / ".metadata").write_text('{"step": 4}')  # JSON, not DCP's
    ok, detail = every_rank_writes(run, 4)
    assert not ok and "no DCP .metadata in DIR" in detail
    (tmp_path / "ckpt" / "step-4" / ".metadata").write_bytes(DCP_METADATA_BYTES)
    wrote(run, 1, "step-4/.metadata.tmp")  # each rank its own coordinator: copies
    ok, detail = every_rank_writes(run, 4)
    assert not ok and "ranks [0, 1] each wrote a .metadata" in detail


def test_an_asynchronous_saves_files_belong_to_the_step_that_began_it(tmp_path):
    run = dcp_run(tmp_path)
    for rank in (0, 1):  # written while step 5 ran (pstep 5), begun after step 4
        wrote(run, rank, f"step-4/__{rank}_0.distcp", pstep=5)
    wrote(run, 0, "step-4/.metadata.tmp", pstep=5)
    ok, detail = every_rank_writes(run, 4)
    assert ok and "rank 0: 1 shard files, rank 1: 1 shard files" in detail, detail
    assert not every_rank_writes(run, 5)[0]


def saved(run: ScriptRun, rank: int, step: int, files: int) -> None:
    for n in range(files):
        wrote(run, rank, f"step-{step}/f{n}", pstep=step, origin=step)


def test_a_kill_during_an_asynchronous_save_expects_the_checkpoint_before_it(tmp_path):
    reference = fabricate(tmp_path, "train", 2, 0, 20)
    for step in (4, 8, 12, 16, 20):
        saved(reference, 0, step, 3)
        saved(reference, 1, step, 1)
    killed = fabricate(tmp_path, "kill", 2, 0, 13, killed=True)
    for step in (4, 8, 12):
        saved(killed, 1, step, 1)
    for step in (4, 8):
        saved(killed, 0, step, 3)
    saved(killed, 0, 12, 1)  # the coordinator killed before its .metadata and pointer
    at, why = newest_complete_at_kill(reference, killed, 12, 4)
    assert at == 8 and "rank 0 had written 1 of its 3 files" in why
    checks = reshard_checks(reference, killed, fabricate(tmp_path, "resume", 3, 8, 12), 12, 4)
    assert all(verdicts(checks).values()), checks
    assert "not complete at the kill" in checks[0]["detail"]
    # a relaunch that found the step-12 checkpoint whole all the same resumed right
    whole = reshard_checks(reference, killed, fabricate(tmp_path, "whole", 3, 12, 8), 12, 4)
    assert all(verdicts(whole).values()), whole
    assert "found it whole" in whole[0]["detail"]
    # an older checkpoint than the newest complete one is still wrong
    older = reshard_checks(reference, killed, fabricate(tmp_path, "older", 3, 4, 16), 12, 4)
    assert not verdicts(older)["reshard.resumes_newest"]
    # the same run at 12 is expected at 12 once the save had ended (a synchronous save)
    saved(killed, 0, 12, 2)
    assert newest_complete_at_kill(reference, killed, 12, 4) == (12, "")
    checks = reshard_checks(reference, killed, fabricate(tmp_path, "late", 3, 8, 12), 12, 4)
    assert not verdicts(checks)["reshard.resumes_newest"]


def test_the_global_batch_split_unevenly_over_the_ranks_fails(tmp_path):
    reference = fabricate(tmp_path, "train", 2, 0, 20)
    killed = fabricate(tmp_path, "kill", 2, 0, 13, killed=True)
    resume = fabricate(tmp_path, "resume", 3, 12, 8)
    files = [resume.observe_dir / protocol.fetch_file(rank) for rank in (0, 1)]
    rank0, rank1 = (f.read_text().splitlines() for f in files)
    moved = [line for line in rank1 if json.loads(line)["pstep"] == 0][:2]
    files[0].write_text("\n".join([*rank0, *moved]) + "\n")
    files[1].write_text("\n".join(line for line in rank1 if line not in moved) + "\n")
    checks = reshard_checks(reference, killed, resume, 12)
    assert not verdicts(checks)["reshard.global_batch"]
    assert "rank 0 read per step {1: 6} samples (expected 4 each)" in checks[1]["detail"]

"""Checks on hand-written evidence (no process runs) added for gaming and wrong causes: ranks
that never exchange gradients, a process group left undestroyed, a resume that replays the past
instead of loading it, and the order of the W=3 comparison's causes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.script_runs import fake_run
from trainer_lab.grading.checks_exchange import forwards_own_shard, gradients_exchanged
from trainer_lab.grading.checks_restart import resume_checks
from trainer_lab.grading.checks_run import distributed_checks, rank0_prints, same_across_world_sizes

GRAD = 161  # elements of the gradient


def steps_with_comm(elements: list[int | None]) -> list[dict]:
    records = []
    for i, sent in enumerate(elements):
        record = {"pstep": i + 1, "post": {"digest": "a"}, "grad": {"numel": GRAD}}
        if sent is not None:
            record["comm"] = {"ops": 1 if sent else 0, "elements": sent}
        records.append(record)
    return records


def test_ranks_that_never_exchange_gradients_fail(tmp_path: Path) -> None:
    files = {f"steps-rank{r}.jsonl": steps_with_comm([0, 0, 0]) for r in (0, 1)}
    ok, detail = gradients_exchanged(fake_run(tmp_path, 2, files))
    assert not ok
    assert detail.startswith("rank 0 exchanged no gradient in 3 of 3 steps")
    assert "likely cause: the ranks never exchange gradients" in detail


def test_a_gradient_sized_exchange_in_most_steps_passes(tmp_path: Path) -> None:
    # FSDP2's reduce-scatter takes the whole gradient in; one odd step does not decide
    files = {f"steps-rank{r}.jsonl": steps_with_comm([GRAD, 2 * GRAD, 0]) for r in (0, 1)}
    assert gradients_exchanged(fake_run(tmp_path / "a", 2, files))[0]
    # a few bytes per step (a loss all-reduced for printing) is no gradient exchange
    files = {f"steps-rank{r}.jsonl": steps_with_comm([1, 1, GRAD]) for r in (0, 1)}
    assert not gradients_exchanged(fake_run(tmp_path / "b", 2, files))[0]
    # steps without a collective record (nothing observed) are not judged
    files = {f"steps-rank{r}.jsonl": steps_with_comm([None, None]) for r in (0, 1)}
    assert gradients_exchanged(fake_run(tmp_path / "c", 2, files))[0]


def test_the_exchange_is_part_of_params_in_sync_at_every_world_size(tmp_path: Path) -> None:
    runs = [
        fake_run(
            tmp_path / f"w{w}",
            w,
            {f"steps-rank{r}.jsonl": steps_with_comm([0, 0]) for r in range(w)},
        )
        for w in (2, 3)
    ]
    checks = {c["name"]: c for c in distributed_checks(runs[:1], runs[1])}
    assert not checks["distributed.params_in_sync"]["passed"]
    assert "the ranks never exchange gradients" in checks["distributed.params_in_sync"]["detail"]


def test_a_rank_that_forwards_the_gathered_global_batch_fails_however_much_it_reduces(
    tmp_path: Path,
) -> None:
    """A gradient-sized all_reduce (of zeros) after the forward, but the model ran on both
    ranks' samples: the reduced tensors carried no gradient another rank needed."""
    records = [
        {**r, "comm": {"ops": 1, "elements": GRAD, "rows": rows}}
        for r, rows in zip(steps_with_comm([GRAD] * 3), (8, 8, 4), strict=True)
    ]
    run = fake_run(tmp_path / "a", 2, {f"steps-rank{r}.jsonl": records for r in (0, 1)})
    assert gradients_exchanged(run)[0]
    ok, detail = forwards_own_shard(run)
    assert not ok
    assert detail.startswith("rank 0's model ran on 8 samples in step 1 (2 of 3 steps")
    assert "likely cause: every rank trains on the whole gathered global batch" in detail
    # its own BATCH_SIZE (micro-batches add up to it), or no forward seen: not judged against it
    rows = (4, 2, 0)
    own = [{**r, "comm": {**r["comm"], "rows": n}} for r, n in zip(records, rows, strict=True)]
    run = fake_run(tmp_path / "b", 2, {f"steps-rank{r}.jsonl": own for r in (0, 1)})
    assert forwards_own_shard(run)[0]


def steps_at(grad_norms: list[float], ends: list[list[float]], sharded: bool = False) -> list:
    """Step records: the gradient's norm, the parameters (a sample) before and after."""
    starts = [[0.0, 0.0], *ends[:-1]]
    return [
        {
            "pstep": i + 1,
            "pre": {"sample": start, "sharded": sharded},
            "post": {"sample": end, "digest": str(end)},
            "grad": {"norm": norm},
        }
        for i, (norm, start, end) in enumerate(zip(grad_norms, starts, ends, strict=True))
    ]


def world_run(tmp_path: Path, world: int, grad_norms: list[float], ends: list[list[float]]):
    files = {f"steps-rank{r}.jsonl": steps_at(grad_norms, ends) for r in range(world)}
    return fake_run(tmp_path, world, files)


def test_a_step_that_scales_with_the_world_size_fails_against_w2_on_the_same_batches(
    tmp_path: Path,
) -> None:
    """Summed gradients: 3x the mean at W=3, 2x at W=2 (its one-process reference may be summed
    too, scaled when alone): the W=2 run served the same global batches tells them apart."""
    w2 = world_run(tmp_path / "w2", 2, [2.0, 2.0], [[1.0, 0.0], [2.0, 0.0]])
    w3 = world_run(tmp_path / "w3", 3, [3.0, 3.0], [[1.5, 0.0], [3.0, 0.0]])
    ok, detail = same_across_world_sizes(w3, w2)
    assert not ok
    assert "gradient norm at W=3 1.50x" in detail
    assert "parameters after step 2 50% of the distance they moved apart" in detail
    assert "likely cause: the update scales with the world size" in detail
    same = world_run(tmp_path / "same", 3, [2.0, 2.0], [[1.0, 0.0], [2.0, 0.0]])
    ok, detail = same_across_world_sizes(same, w2)
    assert ok, detail
    assert detail.endswith("the world size does not change a step")


def test_sharded_runs_are_compared_across_world_sizes_with_their_shards_put_together(
    tmp_path: Path,
) -> None:
    """FSDP2: each rank records its shard; the whole gradient's norm is the shards' together."""
    ends = [[1.0], [2.0]]

    def sharded(world: int, shard_norm: float) -> dict[str, list]:
        records = steps_at([shard_norm] * 2, ends, sharded=True)
        return {f"steps-rank{r}.jsonl": records for r in range(world)}

    w2 = fake_run(tmp_path / "w2", 2, sharded(2, 3 / 2**0.5))  # the whole gradient: norm 3
    ok, detail = same_across_world_sizes(fake_run(tmp_path / "ok", 3, sharded(3, 3**0.5)), w2)
    assert ok, detail
    ok, detail = same_across_world_sizes(fake_run(tmp_path / "sum", 3, sharded(3, 3.0)), w2)
    assert not ok
    assert "gradient norm at W=3 1.73x" in detail


def test_a_rank_that_returns_with_its_process_group_alive_fails(tmp_path: Path) -> None:
    line = {"step": 1, "loss": 1.0, "phases": {"a": 0.1, "b": 0.1, "c": 0.1}, "step_time": 0.3}
    run = fake_run(tmp_path, 0, {})
    (tmp_path / "stdout.log").write_text(json.dumps(line) + "\n")
    observe = run.observe_dir
    (observe / "end-rank0.json").write_text('{"code": 0, "group_alive": false}')
    assert rank0_prints(run)[0]
    (observe / "end-rank0.json").write_text('{"code": 0, "group_alive": true}')
    ok, detail = rank0_prints(run)
    assert not ok
    assert detail.startswith("rank 0 returned with its process group still initialised")
    assert "dist.destroy_process_group()" in detail


def fetch_records(batches: list[list[int]]) -> list[dict]:
    return [{"pstep": p, "id": i} for p, ids in enumerate(batches) for i in ids]


def test_a_resume_that_replays_the_past_names_the_missing_state(tmp_path: Path) -> None:
    """The checkpoint held only the step: the relaunch re-trained steps 1-2 from the initial
    weights on the samples read before the checkpoint, then printed step 3 on."""
    batches = [[0, 1], [2, 3], [4, 5], [6, 7]]
    u_steps = [
        {"pstep": i, "pre": {"digest": f"d{i - 1}"}, "post": {"digest": f"d{i}"}}
        for i in range(1, 5)
    ]
    reference = fake_run(
        tmp_path / "u",
        0,
        {"steps-rank0.jsonl": u_steps, "fetch-rank0.jsonl": fetch_records(batches)},
    )
    r_steps = [
        {
            "pstep": i,
            "pre": {"digest": "d0" if i == 1 else f"x{i - 1}"},
            "post": {"digest": f"x{i}"},
        }
        for i in range(1, 5)
    ]
    relaunch = fake_run(
        tmp_path / "r",
        0,
        {"steps-rank0.jsonl": r_steps, "fetch-rank0.jsonl": fetch_records(batches)},
    )
    lines = [
        {"step": s, "loss": 1.0, "phases": {"a": 0.1, "b": 0.1, "c": 0.1}, "step_time": 0.3}
        for s in (3, 4)
    ]
    (tmp_path / "r" / "stdout.log").write_text("".join(json.dumps(x) + "\n" for x in lines))
    resumed, text = resume_checks(reference, reference, relaunch, 2, "planned fault")
    assert resumed == 0
    assert "likely cause: the checkpoint does not hold the training state" in text
    assert "replaying steps 1-2, re-reading 4 samples consumed before the checkpoint" in text
    assert "RNG stream" not in text and "weights were not loaded" not in text


def test_a_flood_of_collectives_that_fills_the_ring_is_no_exchange(tmp_path: Path) -> None:
    """A step whose collectives overflow the flight recorder's ring (elements -1: what they sent
    cannot be read back) does not count as an exchange: flooding the ring hides nothing."""
    files = {f"steps-rank{r}.jsonl": steps_with_comm([-1, -1, GRAD]) for r in (0, 1)}
    ok, detail = gradients_exchanged(fake_run(tmp_path, 2, files))
    assert not ok
    assert "more than 64 collectives, too many to tell what they sent" in detail


def one_process_run(tmp_path: Path, world: int, grads: list[list[float]]):
    """Step records with gradient samples (and norms) from the same initial weights."""
    records = [
        {
            "pstep": i + 1,
            "pre": {"sample": [0.0, 0.0], "digest": "w0"},
            "post": {"sample": [float(i + 1), 0.0], "digest": str(i)},
            "grad": {"norm": sum(x * x for x in g) ** 0.5, "sample": g},
        }
        for i, g in enumerate(grads)
    ]
    return fake_run(tmp_path, world, {f"steps-rank{r}.jsonl": records for r in range(world)})


def test_the_w3_comparison_names_a_sum_only_when_the_first_step_points_the_same_way(
    tmp_path: Path,
) -> None:
    """At the first step both runs hold the same weights: a sum is the reference's direction,
    W times longer; a gradient broadcast from one rank points elsewhere, however long it is
    (seen in CI: 1.96x and 122 % apart, which the ratio alone named a sum)."""
    from trainer_lab.grading.checks_run import global_batch

    ref = one_process_run(tmp_path / "ref", 1, [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    summed = one_process_run(tmp_path / "sum", 3, [[3.0, 0.0], [0.0, 3.0], [0.0, 3.0]])
    ok, detail = global_batch(summed, ref)
    assert not ok and "likely cause: gradients summed across ranks" in detail
    broadcast = one_process_run(tmp_path / "bc", 3, [[0.6, 1.4], [0.0, 2.0], [0.0, 2.0]])
    ok, detail = global_batch(broadcast, ref)
    assert not ok and "2.00x" in detail
    assert "likely cause: a step is not one step on the global batch" in detail
    assert "broadcast from one rank instead of all-reduced" in detail
    # a broadcast whose first step lies the reference's way (within 10 %), but 1.8x long, not
    # 3x (seen once in a grading's fresh draw): not a sum either
    aligned = one_process_run(tmp_path / "al", 3, [[1.8, 0.1], [0.0, 2.0], [0.0, 2.0]])
    ok, detail = global_batch(aligned, ref)
    assert not ok and "broadcast from one rank instead of all-reduced" in detail

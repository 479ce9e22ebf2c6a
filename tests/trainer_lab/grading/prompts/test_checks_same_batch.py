"""The biotech round's same-batch reference on hand-written evidence: a W=2 run's step-1
gradient against one process's on the same global batch, compared only when both read the same
sequences from the same initial weights."""

from __future__ import annotations

import json
from pathlib import Path

from trainer_lab.grading.prompts.checks_same_batch import SAME_BATCH_TOLERANCE, same_batch_problem
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun

GRAD = [0.5, -0.25, 0.125, 1.0]


def run(
    tmp_path: Path,
    name: str,
    reads: dict[int, list[int]],
    grad: list[float],
    *,
    start: str = "w0",
    status: str = "ok",
) -> ScriptRun:
    """A run whose ranks read `reads[rank]` before step 1 and then stepped once with `grad`
    (every rank's record the same, as after an all-reduce)."""
    observe = tmp_path / name / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    norm = sum(g * g for g in grad) ** 0.5
    for rank, ids in reads.items():
        fetched = [{"pstep": 0, "id": i} for i in ids] + [{"pstep": 1, "id": 99}]
        (observe / protocol.fetch_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in fetched)
        )
        step = {
            "pstep": 1,
            "pre": {"digest": start},
            "post": {},
            "grad": {"digest": json.dumps(grad), "norm": norm, "sample": grad},
        }
        (observe / protocol.steps_file(rank)).write_text(json.dumps(step) + "\n")
    world = len(reads) if len(reads) > 1 else 0
    launch = ScriptLaunch(name, Path("train.py"), (), world, tmp_path / name, tmp_path, 60.0)
    return ScriptRun(launch, status, 0 if status == "ok" else 1, 1.0)  # type: ignore[arg-type]


W2 = {0: [4, 9, 1, 7], 1: [3, 8, 2, 6]}
ONE = {0: [1, 2, 3, 4, 6, 7, 8, 9]}


def test_the_same_gradient_on_the_same_sequences_holds(tmp_path) -> None:
    close = [g * (1 + 1e-7) for g in GRAD]  # sums in another order
    assert (
        same_batch_problem(run(tmp_path, "w2", W2, close), run(tmp_path, "one", ONE, GRAD)) is None
    )


def test_a_mean_of_means_or_another_reduction_is_named(tmp_path) -> None:
    off = [g * 1.002 for g in GRAD]  # the ranks' means weighted by their own residue counts
    why = same_batch_problem(run(tmp_path, "w2", W2, off), run(tmp_path, "one", ONE, GRAD))
    assert why is not None
    assert "step 1's gradient at W=2 is 0.002 (relative) from one process's on the same 8" in why
    assert "(norm x1.002), expected within 0.0001" in why
    just_over = [g * (1 + 2 * SAME_BATCH_TOLERANCE) for g in GRAD]
    assert same_batch_problem(run(tmp_path, "w2b", W2, just_over), run(tmp_path, "o", ONE, GRAD))


def test_runs_that_cannot_be_compared_give_no_verdict(tmp_path) -> None:
    off = [g * 1.5 for g in GRAD]
    w2 = run(tmp_path, "w2", W2, off)
    other_reads = run(tmp_path, "other", {0: [1, 2, 3, 4, 6, 7, 8, 10]}, GRAD)
    assert same_batch_problem(w2, other_reads) is None  # its sampler depends on the world size
    other_start = run(tmp_path, "start", ONE, GRAD, start="w1")
    assert same_batch_problem(w2, other_start) is None  # other initial weights
    failed = run(tmp_path, "failed", ONE, GRAD, status="error")
    assert same_batch_problem(w2, failed) is None  # its own checks say why

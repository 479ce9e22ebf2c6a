"""The biotech round's W=2 step against one process on the same global batch (torch-free).

The loss of a step is the mean cross-entropy over the real residues of the whole global batch.
A rank that averages over its own residues and then averages the ranks' means (a mean of means)
weights each rank's residues by the inverse of its own count: with sequences of different
lengths that is another gradient, though the loss scale and every other check look right. So is
a gradient exchange that reduces with another op than a sum (max, min, product).

The grading runs the script once more as one process with BATCH_SIZE = W x the rank's, dropout
off in both runs. When its step 1 read the very sequences the W=2 run's ranks read for their
step 1, from the same initial weights, the step-1 gradients must agree within
SAME_BATCH_TOLERANCE (relative: sums in another order and other padding move them by about
1e-7). A script whose one-process batches are other sequences (a sampler whose order depends on
the world size) is not compared here.
"""

from __future__ import annotations

from trainer_lab.grading.checks_run import max_abs_diff
from trainer_lab.usercode.evidence import fetches, step_records
from trainer_lab.usercode.harness import ScriptRun

SAME_BATCH_TOLERANCE = 1e-4


def _step_one_reads(run: ScriptRun) -> list[int]:
    return sorted(
        i for rank in run.ranks() for done, i in fetches(run.observe_dir, rank) if not done
    )


def _relative_gap(ref: dict, got: dict) -> float:
    """How far `got`'s gradient summary is from `ref`'s, relative to `ref`'s norm."""
    scale = max(float(ref.get("norm") or 0.0), 1e-12)
    gap = abs(float(ref.get("norm") or 0.0) - float(got.get("norm") or 0.0))
    return max(gap, max_abs_diff(ref, got)) / scale


def same_batch_problem(run: ScriptRun, reference: ScriptRun) -> str | None:
    """Why the W=2 run's step-1 gradient is not one process's on the same global batch; None
    when it is, or when the two runs cannot be compared (module doc)."""
    if run.status != "ok" or reference.status != "ok":
        return None  # the runs' own checks say why they failed
    mine, theirs = step_records(run.observe_dir, 0), step_records(reference.observe_dir, 0)
    read = _step_one_reads(run)
    if not mine or not theirs or not read or read != _step_one_reads(reference):
        return None
    first, ref = mine[0], theirs[0]
    if (first.get("pre") or {}).get("digest") != (ref.get("pre") or {}).get("digest"):
        return None  # other initial weights (the one-process check names an unseeded model)
    if (first.get("grad") or {}).get("sharded") or (ref.get("grad") or {}).get("sharded"):
        return None  # a shard's summary is not the whole gradient's
    gap = _relative_gap(ref.get("grad") or {}, first.get("grad") or {})
    if gap <= SAME_BATCH_TOLERANCE:
        return None
    norm, ref_norm = (first.get("grad") or {}).get("norm"), (ref.get("grad") or {}).get("norm")
    ratio = f" (norm x{float(norm) / float(ref_norm):.4g})" if norm and ref_norm else ""
    return (
        f"step 1's gradient at W=2 is {gap:.3g} (relative) from one process's on the same "
        f"{len(read)} sequences{ratio}, expected within {SAME_BATCH_TOLERANCE:g}"
    )

"""Printed losses against the losses the ranks trained on (torch-free; the biotech round).

Rank 0 prints one loss per step; every rank's backward passes start from scalars the harness
records (token_remap.record_backward_losses). A printed loss is the global batch's mean, and
what a rank backpropagates is its share of it in one of a few honest scales, so for the step's
sum T over the ranks' backward scalars and the step's real residues R the printed loss is

- T (each rank backpropagates its sum over the global count),
- T / W (each rank scales by W because DDP averages the ranks' gradients, or prints the mean of
  the ranks' means),
- T / R (each rank backpropagates its sum and gradients are divided by the count afterwards),

one of them at every step. Fabricated numbers (a curve printed beside real training) match none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from trainer_lab.grading.prompts.checks_batching import read_lengths
from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import read_jsonl
from trainer_lab.usercode.harness import ScriptRun

RELATIVE, ABSOLUTE = 1e-3, 1e-4  # a printed value rounded to 4 decimals still matches


def trained_losses(run: ScriptRun, steps: int) -> dict[int, float]:
    """Step -> the sum over ranks of the scalars their backward passes of that step began from
    (a backward after c optimizer steps belongs to step c + 1); {} when none was recorded."""
    found: dict[int, float] = {}
    for rank in run.ranks():
        for record in read_jsonl(run.observe_dir / protocol.losses_file(rank)):
            done, value = record.get("pstep"), record.get("loss")
            if isinstance(done, int) and isinstance(value, int | float) and done < steps:
                found[done + 1] = found.get(done + 1, 0.0) + float(value)
    return found


def step_residues(run: ScriptRun, lengths: Sequence[int], steps: int) -> dict[int, int]:
    """Step -> the residues of the sequences every rank read for it."""
    found: dict[int, int] = {}
    for rank in run.ranks():
        for step, read in read_lengths(run, rank, lengths, steps).items():
            found[step] = found.get(step, 0) + sum(read)
    return found


def _close(printed: float, expected: float) -> bool:
    return abs(printed - expected) <= RELATIVE * abs(printed) + ABSOLUTE


def printed_loss_problem(
    printed: Mapping[int, float],
    trained: Mapping[int, float],
    residues: Mapping[int, int],
    world: int,
) -> str | None:
    """Why the printed losses are not the trained ones in any one scale (module doc); None
    when one scale fits every step both exist for, or nothing was trained from a scalar."""
    shared = sorted(s for s in printed if s in trained)
    if not shared:
        return None
    scales = {
        "the sum": lambda s: 1.0,
        f"the sum / W={world}": lambda s: 1.0 / max(world, 1),
        "the sum / the step's residues": lambda s: 1.0 / max(residues.get(s, 0), 1),
    }
    for scale in scales.values():
        if all(_close(printed[s], trained[s] * scale(s)) for s in shared):
            return None
    unmatched = [
        s for s in shared if not any(_close(printed[s], trained[s] * f(s)) for f in scales.values())
    ]
    first = unmatched[0] if unmatched else shared[0]  # else: no one scale fits every step
    told = ", ".join(f"{name} {trained[first] * f(first):.4g}" for name, f in scales.items())
    return (
        f"the printed losses are not the losses the ranks trained on: step {first} printed "
        f"{printed[first]:.4g}, its backward passes began from ({told})"
    )

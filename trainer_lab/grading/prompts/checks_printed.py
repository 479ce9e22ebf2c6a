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

from trainer_lab.grading.printed_loss import backward_losses, first_unmatched, readings
from trainer_lab.grading.prompts.checks_batching import read_lengths
from trainer_lab.usercode.harness import ScriptRun


def trained_losses(run: ScriptRun, steps: int) -> dict[int, float]:
    """Step -> the sum over ranks of the scalars their backward passes of that step began from
    (a backward after c optimizer steps belongs to step c + 1); {} when none was recorded."""
    return {step: sum(values) for step, values in backward_losses(run, steps).items()}


def step_residues(run: ScriptRun, lengths: Sequence[int], steps: int) -> dict[int, int]:
    """Step -> the residues of the sequences every rank read for it."""
    found: dict[int, int] = {}
    for rank in run.ranks():
        for step, read in read_lengths(run, rank, lengths, steps).items():
            found[step] = found.get(step, 0) + sum(read)
    return found


def printed_loss_problem(
    printed: Mapping[int, float],
    trained: Mapping[int, float],
    residues: Mapping[int, int],
    world: int,
) -> str | None:
    """Why the printed losses are not the trained ones in any one scale (module doc); None
    when one scale fits every step both exist for, or nothing was trained from a scalar."""
    families = {
        "the sum": dict(trained),
        f"the sum / W={world}": {s: t / max(world, 1) for s, t in trained.items()},
        "the sum / the step's residues": {
            s: t / max(residues.get(s, 0), 1) for s, t in trained.items()
        },
    }
    first = first_unmatched(printed, families)
    if first is None:
        return None
    return (
        f"the printed losses are not the losses the ranks trained on: step {first} printed "
        f"{printed[first]:.4g}, its backward passes began from ({readings(families, first)})"
    )

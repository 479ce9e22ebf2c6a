"""The biotech round's batching check (torch-free): sequences batched by length, or packed.

The contract asks for batches of sequences of similar length (bucketing) or several sequences
packed into a row. What a run did is read from two records per rank and step of the W=2 run:
the sequences it read (the dataset's reads, evidence.fetches) and what its nn.Embedding read
with gradients on (token_remap.py: forwards, rows and slots). A rank-step with two or more
sequences is

- batched when fewer forwards than sequences embedded them (one forward held several; a
  forward per sequence is no batch at all, however it is padded);
- packed when fewer rows than sequences held them (several sequences in a row);
- length-grouped when its sequences, padded to the longest, would pad at most GROUPED_SHARE of
  what batches drawn at random from the same trained sequences pad (a seeded draw of the same
  batch sizes: bucketing pads ~7 %, random batches of 4 ~27 %, two length buckets ~17 %).

The check holds when most rank-steps are batched and the run packs or groups by length.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import fetches, read_jsonl
from trainer_lab.usercode.harness import ScriptRun

BATCHED_SHARE = 0.75  # of the rank-steps with two or more sequences: one forward held several
PACKED_SHARE = 0.5  # of those rank-steps: fewer rows than sequences (packing)
GROUPED_SHARE = 0.75  # padding of the run's own grouping / that of random grouping
RANDOM_DRAWS = 200


@dataclass(frozen=True)
class RankStep:
    """One rank's step: the lengths of the sequences it read, the embedding forwards (with
    gradients on) and the rows they held."""

    lengths: tuple[int, ...]
    forwards: int
    rows: int


def read_lengths(
    run: ScriptRun, rank: int, lengths: Sequence[int], steps: int
) -> dict[int, list[int]]:
    """Step (1..`steps`) -> the lengths of the sequences `rank` read for it (a read after c
    optimizer steps feeds step c + 1)."""
    read: dict[int, list[int]] = {}
    for done, sample in fetches(run.observe_dir, rank):
        if done < steps and 0 <= sample < len(lengths):
            read.setdefault(done + 1, []).append(lengths[sample])
    return read


def rank_steps(run: ScriptRun, lengths: Sequence[int], steps: int) -> list[RankStep]:
    """Every rank's steps 1..`steps` of `run` (a read or forward after c optimizer steps
    belongs to step c + 1)."""
    found: list[RankStep] = []
    for rank in run.ranks():
        read = read_lengths(run, rank, lengths, steps)
        forwards: dict[int, int] = {}
        rows: dict[int, int] = {}
        for record in read_jsonl(run.observe_dir / protocol.tokens_file(rank)):
            done, held = record.get("pstep"), record.get("rows")
            if isinstance(done, int) and done < steps and record.get("grad", True):
                forwards[done + 1] = forwards.get(done + 1, 0) + 1
                rows[done + 1] = rows.get(done + 1, 0) + (held if isinstance(held, int) else 1)
        for step, these in sorted(read.items()):
            found.append(RankStep(tuple(these), forwards.get(step, 0), rows.get(step, 0)))
    return found


def naive_padding(groups: Iterable[Sequence[int]]) -> float:
    """The share of slots that padding each group to its longest sequence fills."""
    slots = real = 0
    for group in groups:
        if group:
            slots += len(group) * max(group)
            real += sum(group)
    return 1 - real / slots if slots else 0.0


def random_padding(sizes: Sequence[int], pool: Sequence[int], seed: int = 0) -> float:
    """naive_padding of batches of `sizes` drawn at random from `pool` (the trained sequences'
    lengths), averaged over RANDOM_DRAWS seeded draws."""
    if not pool:
        return 0.0
    rng = random.Random(seed)
    total = 0.0
    for _ in range(RANDOM_DRAWS):
        total += naive_padding(rng.sample(list(pool), min(n, len(pool))) for n in sizes)
    return total / RANDOM_DRAWS


def batching_verdict(steps: Sequence[RankStep], pool: Sequence[int]) -> tuple[bool, str]:
    """(holds, what was seen) for the rank-steps of one run and the trained sequences' lengths."""
    several = [s for s in steps if len(s.lengths) >= 2]
    if not several:
        return False, "no rank read two or more sequences for one step"
    batched = sum(1 for s in several if 0 < s.forwards < len(s.lengths))
    seen = (
        f"{len(several)} rank-steps read 2+ sequences: {batched} embedded them in fewer "
        "forwards than sequences"
    )
    if batched < BATCHED_SHARE * len(several):
        return False, (
            f"{seen}; the others one sequence per forward: that is no batch (no padding "
            "because nothing is batched), the contract's BATCH_SIZE sequences are not trained "
            "together"
        )
    packed = sum(1 for s in several if 0 < s.rows < len(s.lengths))
    if packed >= PACKED_SHARE * len(several):
        return True, f"{seen}; {packed} packed several sequences into a row"
    mine = naive_padding(s.lengths for s in several)
    chance = random_padding([len(s.lengths) for s in several], pool)
    grouped = f"padded to each batch's longest, they fill {mine:.0%} of the slots with padding"
    grouped += f" (random batches of the same sizes: {chance:.0%})"
    if mine <= GROUPED_SHARE * chance:
        return True, f"{seen}; grouped by length: {grouped}"
    return False, (
        f"{seen}, one sequence per row (not packed), and not grouped by length: {grouped}; "
        "expected batches of similar lengths (buckets) or several sequences packed in a row"
    )

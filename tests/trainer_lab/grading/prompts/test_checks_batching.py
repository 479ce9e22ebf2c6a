"""The biotech round's batching verdict on records made by hand: batched, packed and grouped by
length pass; one sequence per forward and random batches fail, each for its reason."""

from __future__ import annotations

import random

from trainer_lab.grading.prompts.checks_batching import (
    RankStep,
    batching_verdict,
    naive_padding,
    random_padding,
)

_DRAW = random.Random(3)
POOL = [_DRAW.randint(6, 40) for _ in range(60)]  # lengths as drill_data's (6 to 40)


def steps_of(groups: list[list[int]], *, forwards: int = 1, rows: int | None = None) -> list:
    return [RankStep(tuple(g), forwards, len(g) if rows is None else rows) for g in groups]


def random_groups(seed: int, n: int = 30) -> list[list[int]]:
    rng = random.Random(seed)
    return [rng.sample(POOL, 4) for _ in range(n)]


def bucketed_groups(seed: int, n: int = 30) -> list[list[int]]:
    rng = random.Random(seed)
    ordered = sorted(rng.sample(POOL, len(POOL)))
    groups = [ordered[k : k + 4] for k in range(0, len(ordered), 4)]
    return [groups[rng.randrange(len(groups))] for _ in range(n)]


def test_naive_padding_is_the_share_of_slots_padded_to_the_longest():
    assert naive_padding([[10, 10], [4, 8]]) == 1 - 32 / 36
    assert naive_padding([]) == 0.0
    assert random_padding([4] * 30, [7] * 60) == 0.0  # equal lengths never pad


def test_bucketed_batches_pass_and_random_ones_fail_for_their_grouping():
    holds, seen = batching_verdict(steps_of(bucketed_groups(0)), POOL)
    assert holds, seen
    assert "grouped by length" in seen
    holds, seen = batching_verdict(steps_of(random_groups(0)), POOL)
    assert not holds
    assert "not grouped by length" in seen and "not packed" in seen


def test_random_batches_fail_under_any_draw_and_buckets_pass_under_any():
    assert not any(batching_verdict(steps_of(random_groups(s)), POOL)[0] for s in range(20))
    assert all(batching_verdict(steps_of(bucketed_groups(s)), POOL)[0] for s in range(20))


def test_packed_rows_pass_whatever_the_grouping():
    holds, seen = batching_verdict(steps_of(random_groups(1), rows=2), POOL)
    assert holds and "packed" in seen


def test_one_sequence_per_forward_fails_even_when_grouped_by_length():
    groups = bucketed_groups(2)
    holds, seen = batching_verdict([RankStep(tuple(g), len(g), len(g)) for g in groups], POOL)
    assert not holds and "one sequence per forward" in seen


def test_a_few_unbatched_steps_are_tolerated_but_not_most():
    groups = bucketed_groups(4, 20)
    few = steps_of(groups[:16]) + [RankStep(tuple(g), 4, 4) for g in groups[16:]]
    assert batching_verdict(few, POOL)[0]
    most = steps_of(groups[:4]) + [RankStep(tuple(g), 4, 4) for g in groups[4:]]
    assert not batching_verdict(most, POOL)[0]


def test_steps_with_one_sequence_are_not_judged_and_none_at_all_fails():
    last = [RankStep((17,), 1, 1)]
    assert batching_verdict(steps_of(bucketed_groups(5)) + last, POOL)[0]
    holds, seen = batching_verdict(last, POOL)
    assert not holds and "no rank read two or more" in seen

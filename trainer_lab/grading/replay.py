"""A resume that replays the past instead of loading it: the checkpoint held the step alone, and
the relaunch re-trained the steps before it from the initial weights, re-reading their samples
(which a relaunch serves other values: usercode/dataplan.py's poison window)."""

from __future__ import annotations


def replayed_samples(
    u: dict[int, list[int]], r: dict[int, list[int]], resumed: int, expected: int
) -> int:
    """How many samples the relaunch (`r`: global step -> ids, counted from the weights after
    step `resumed`) read again, up to step `expected`, that the uninterrupted run (`u`) consumed
    in those steps."""
    past = {i for s, ids in u.items() if resumed < s <= expected for i in ids}
    return len([i for s, ids in r.items() if resumed < s <= expected for i in ids if i in past])


def replay_cause(resumed: int, expected: int, replayed: int) -> str:
    return (
        f"the checkpoint does not hold the training state: the relaunch rebuilt it by replaying "
        f"steps {resumed + 1}-{expected}, re-reading {replayed} samples consumed before the "
        "checkpoint (a relaunch serves those other values: the past cannot be replayed); save "
        "the weights, optimizer, RNG and sampler position, and load them"
    )

"""sampler lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext, LabError
from trainer_lab.events import steps_of

PER_RANK_BATCH = 4

Steps = dict[int, dict[int, list[int]]]  # step -> rank -> ids


def ids_by_step(events: dict[int, list[dict[str, Any]]], run: str) -> tuple[Steps, dict[int, int]]:
    """Sample ids per step and rank for one run label, and each step's epoch."""
    steps: Steps = {}
    epochs: dict[int, int] = {}
    for rank, records in events.items():
        for record in steps_of(records, run):
            steps.setdefault(record["step"], {})[rank] = record["sample_ids"]
            epochs[record["step"]] = record["epoch"]
    return steps, epochs


def overlapping_steps(steps: Steps) -> list[int]:
    bad = []
    for step, per_rank in sorted(steps.items()):
        flat = [i for ids in per_rank.values() for i in ids]
        if len(flat) != len(set(flat)):
            bad.append(step)
    return bad


def epoch_counts(steps: Steps, epochs: dict[int, int], epoch: int) -> Counter[int]:
    return Counter(
        i
        for step, per_rank in steps.items()
        if epochs[step] == epoch
        for ids in per_rank.values()
        for i in ids
    )


def coverage(counts: Counter[int], n: int) -> tuple[int, int]:
    """(ids seen more than once (extra sightings), ids never seen)."""
    duplicated = sum(c - 1 for c in counts.values() if c > 1)
    missing = sum(1 for i in range(n) if counts[i] == 0)
    return duplicated, missing


def epoch_order(steps: Steps, epochs: dict[int, int], epoch: int) -> list[int]:
    return [
        i
        for step in sorted(s for s in steps if epochs[s] == epoch)
        for rank in sorted(steps[step])
        for i in steps[step][rank]
    ]


def drive(run: LabContext) -> None:
    w = run.world_size
    n = run.params["samples_per_rank"] * w + 1
    per_rank = math.ceil(n / w)
    epoch_steps = math.ceil(per_rank / PER_RANK_BATCH)
    drop_per_rank = n // w
    drop_epoch_steps = drop_per_rank // PER_RANK_BATCH
    resume_at = epoch_steps + max(epoch_steps // 2, 1)
    cfg = TrainConfig(n_samples=n, global_batch=PER_RANK_BATCH * w, steps=2 * epoch_steps)
    run.plan(1)
    run.launch(
        "trainer_lab.labs.sampler.worker:main",
        {
            "config": cfg.to_dict(),
            "sabotage": run.params["sabotage"],
            "epoch_steps": epoch_steps,
            "drop_epoch_steps": drop_epoch_steps,
            "resume_at": resume_at,
            "collective_timeout_s": 20,
        },
    )
    padding = (w - n % w) % w
    run.observe("dataset_size", n)
    run.observe("epoch_steps", epoch_steps)
    run.observe("expected_padding", padding)

    epochs_steps, epochs_of = ids_by_step(run.events("epochs"), "epochs")
    if len(epochs_steps) != 2 * epoch_steps:
        raise LabError(f"epochs run logged {len(epochs_steps)} steps, expected {2 * epoch_steps}")
    drop_steps, drop_epochs = ids_by_step(run.events("drop_last"), "drop_last")
    same_steps, same_epochs = ids_by_step(run.events("no_set_epoch"), "no_set_epoch")
    before, before_epochs = ids_by_step(run.events("resume"), "before")
    after, after_epochs = ids_by_step(run.events("resume"), "after")
    bare, bare_epochs = ids_by_step(run.events("no_sampler_state"), "after")

    overlaps = sorted(
        set(overlapping_steps(epochs_steps))
        | set(overlapping_steps(drop_steps))
        | set(overlapping_steps(after))
    )
    run.observe("overlapping_steps", len(overlaps))
    run.check(
        "ranks_disjoint_within_step",
        not overlaps,
        f"{len(overlaps)} steps with an id on two ranks"
        + (f" (first: step {overlaps[0]})" if overlaps else f" over {w} ranks"),
    )

    dup0, miss0 = coverage(epoch_counts(epochs_steps, epochs_of, 0), n)
    dup1, miss1 = coverage(epoch_counts(epochs_steps, epochs_of, 1), n)
    run.observe("padded_duplicates", dup0)
    run.observe("missing_ids", miss0 + miss1)
    run.check(
        "epoch_exactly_once",
        miss0 == miss1 == 0 and dup0 == dup1 == padding,
        f"n={n}, W={w}: epoch 0 {dup0} duplicates / {miss0} missing, epoch 1 {dup1} / {miss1};"
        f" sampler padding {padding}",
    )

    drop_dup, dropped = coverage(epoch_counts(drop_steps, drop_epochs, 0), n)
    expected_dropped = n - drop_epoch_steps * PER_RANK_BATCH * w
    run.observe("drop_last.dropped", dropped)
    run.observe("drop_last.expected_dropped", expected_dropped)
    run.observe("drop_last.duplicates", drop_dup)
    run.check(
        "drop_last_accounted",
        drop_dup == 0 and dropped == expected_dropped,
        f"drop_last: {dropped} ids dropped ({n % w} by the sampler, "
        f"{expected_dropped - n % w} in partial last batches), {drop_dup} duplicates",
    )

    differ = epoch_order(epochs_steps, epochs_of, 0) != epoch_order(epochs_steps, epochs_of, 1)
    identical = epoch_order(same_steps, same_epochs, 0) == epoch_order(same_steps, same_epochs, 1)
    run.observe("set_epoch.orders_differ", differ)
    run.observe("no_set_epoch.orders_identical", identical)
    run.check(
        "set_epoch_reshuffles",
        differ and identical,
        f"with set_epoch epoch orders {'differ' if differ else 'are IDENTICAL'}; "
        f"without it they are {'identical' if identical else 'different'}",
    )

    reference = epoch_counts(epochs_steps, epochs_of, 1)

    def resumed(after_steps: Steps, after_epochs: dict[int, int]) -> tuple[bool, int, int]:
        """Does the resumed run continue the uninterrupted id sequence, and how many id
        sightings in the resumed epoch are extra (duplicated) or lacking (skipped)
        relative to the uninterrupted epoch (so padding cancels out)."""
        matches = bool(after_steps) and all(
            after_steps[step] == epochs_steps.get(step) for step in after_steps
        )
        combined: Steps = {s: v for s, v in before.items() if before_epochs[s] == 1}
        combined.update({s: v for s, v in after_steps.items() if after_epochs[s] == 1})
        counts = epoch_counts(combined, dict.fromkeys(combined, 1), 1)
        ids = set(counts) | set(reference)
        duplicated = sum(max(0, counts[i] - reference[i]) for i in ids)
        skipped = sum(max(0, reference[i] - counts[i]) for i in ids)
        return matches, duplicated, skipped

    ok_match, ok_dup, ok_miss = resumed(after, after_epochs)
    bad_match, bad_dup, bad_miss = resumed(bare, bare_epochs)
    run.observe("resume.step", resume_at)
    run.observe("resume.sequence_matches", ok_match)
    run.observe("resume.duplicated", ok_dup)
    run.observe("resume.skipped", ok_miss)
    run.observe("no_sampler_state.duplicated", bad_dup)
    run.observe("no_sampler_state.skipped", bad_miss)
    run.observe("no_sampler_state.sequence_matches", bad_match)
    run.check(
        "resume_continues_sequence",
        ok_match,
        f"resumed at step {resume_at} (mid epoch 1): ids of steps {resume_at + 1}.."
        f"{2 * epoch_steps} {'equal' if ok_match else 'DIFFER from'} the uninterrupted run",
    )
    run.check(
        "resume_exactly_once",
        ok_dup == 0 and ok_miss == 0,
        f"resumed epoch vs uninterrupted: {ok_dup} ids duplicated, {ok_miss} skipped",
    )
    run.check(
        "missing_state_detected",
        bad_dup > 0 and bad_miss > 0 and not bad_match,
        f"without sampler state: {bad_dup} ids duplicated, {bad_miss} skipped in the resumed epoch",
    )

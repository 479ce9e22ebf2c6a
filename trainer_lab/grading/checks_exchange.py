"""Whether the ranks of a data-parallel run exchange gradients, from what each rank did between
its forward and its optimizer step (usercode/comms.py): the collectives it issued, and the samples
its model ran on. Each returns (passed, detail); checks_run.distributed_checks puts them in
distributed.params_in_sync. And whether its samples came through the dataset at all."""

from __future__ import annotations

from trainer_lab.grading.contract import BATCH_SIZE
from trainer_lab.usercode.evidence import bypass_reads, step_records
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.protocol import FR_BUFFER

# A data-parallel step exchanges its gradient: the collectives a rank issues between its forward
# and its optimizer step (usercode/comms.py) carry at least this share of the gradient's elements
# (DDP, a hand all-reduce: 1; FSDP2's reduce-scatter: the whole gradient in, W x its shard), in
# most steps. Ranks that each train on the whole gathered batch exchange nothing.
GRAD_EXCHANGE_MIN = 0.5


def gradients_exchanged(run: ScriptRun) -> tuple[bool, str]:
    """Every rank communicates gradient-sized data between its forward and its optimizer step,
    in most steps (ranks with no collective record, e.g. none observed, are not judged)."""
    short: dict[int, tuple[int, int, int, int]] = {}
    for rank in run.ranks():
        steps = [s for s in step_records(run.observe_dir, rank) if "comm" in s]
        # a step with more collectives than the ring holds (elements -1) is not an exchange
        # the grader could see: it counts as none (a flood of small collectives hides nothing)
        few = [
            s
            for s in steps
            if s["comm"]["elements"] < GRAD_EXCHANGE_MIN * (s["grad"].get("numel") or 0)
        ]
        if steps and len(few) * 2 > len(steps):
            worst = few[0]
            short[rank] = (
                len(few),
                len(steps),
                worst["comm"]["elements"],
                worst["grad"].get("numel") or 0,
            )
    if not short:
        return True, "the ranks exchange gradients each step"
    rank, (n, of, sent, numel) = next(iter(short.items()))
    seen = (
        f"{sent} elements"
        if sent >= 0
        else f"more than {FR_BUFFER} collectives, too many to tell what they sent"
    )
    return False, (
        f"rank {rank} exchanged no gradient in {n} of {of} steps (collectives between its "
        f"forward and its optimizer step: {seen}, the gradient has {numel}); expected "
        "the gradients all-reduced (or reduce-scattered) across ranks every step; likely cause: "
        "the ranks never exchange gradients (each trains on its own batch, or on the whole "
        "gathered global batch)"
    )


def forwards_own_shard(run: ScriptRun) -> tuple[bool, str]:
    """Every rank runs its model on at most its own BATCH_SIZE samples a step, in most steps
    (comms.py counts the samples of its outermost forwards): a rank that trains on the
    gathered global batch computes the whole step itself, and the collectives it issues after
    its forward (however gradient-sized) carry no gradient another rank needs."""
    batch = (run.launch.data.batch_size if run.launch.data else None) or BATCH_SIZE
    for rank in run.ranks():
        steps = [s for s in step_records(run.observe_dir, rank) if s.get("comm", {}).get("rows")]
        over = [s for s in steps if s["comm"]["rows"] > batch]
        if steps and len(over) * 2 > len(steps):
            return False, (
                f"rank {rank}'s model ran on {over[0]['comm']['rows']} samples in step "
                f"{over[0]['pstep']} ({len(over)} of {len(steps)} steps on more than its "
                f"BATCH_SIZE = {batch}); expected each rank to compute the gradient of its own "
                "shard, the gradients averaged across ranks; likely cause: every rank trains on "
                "the whole gathered global batch (the collectives after the forward carry no "
                "gradient)"
            )
    return True, "each rank runs its model on its own shard"


def outside_reads(run: ScriptRun) -> str | None:
    """Reads through drill_data's module-level reader from outside the dataset (the script
    calling it, not dataset[i] / __getitems__): the contract's read path is not kept. None when
    every read came through the dataset."""
    outside = {rank: bypass_reads(run.observe_dir, rank) for rank in run.ranks()}
    if not any(outside.values()):
        return None
    return (
        f"reads from outside the dataset per rank: {outside}; expected every sample read "
        "through dataset[i] or dataset.__getitems__(ids); likely cause: batches read straight "
        "from drill_data's module-level reader"
    )

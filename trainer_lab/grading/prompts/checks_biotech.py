"""The biotech data-pipeline round's checks (torch-free): the harness's records of each launch
(the sequences each rank read after how many optimizer steps, the gradients of each step) and
rank 0's JSON lines, judged against the contract (biotech.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from trainer_lab.grading.checks_exchange import outside_reads
from trainer_lab.grading.checks_run import max_abs_diff
from trainer_lab.grading.prompts.checks_batching import batching_verdict, rank_steps, read_lengths
from trainer_lab.grading.prompts.checks_eval import CAUSE, lines, trains
from trainer_lab.grading.prompts.checks_printed import (
    printed_loss_problem,
    step_residues,
    trained_losses,
)
from trainer_lab.grading.prompts.checks_same_batch import same_batch_problem
from trainer_lab.result import Check
from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import fetches, read_jsonl, step_records
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

GRAD_TOLERANCE = 1e-6  # relative: the same residues in another padding give the same sums
LOSS_TOLERANCE = 1e-6
CLASSES = 3  # drill_data.CLASSES (a test keeps them equal)


def steps_made(run: ScriptRun) -> int:
    """Optimizer steps rank 0 made in this launch (the harness counts them)."""
    return len(step_records(run.observe_dir, 0))


def step_reads(run: ScriptRun, first: int, last: int) -> list[tuple[int, list[int]]]:
    """(step, the ids every rank read for it) for this launch's steps first..last (a read after
    c optimizer steps feeds step c+1), in step order."""
    found: dict[int, list[int]] = {}
    for rank in run.ranks():
        for done, sample in fetches(run.observe_dir, rank):
            if first <= done + 1 <= last:
                found.setdefault(done + 1, []).append(sample)
    return sorted(found.items())


def validation_reads(run: ScriptRun) -> set[int]:
    """The ids read after the launch's last optimizer step (the validation after step N)."""
    return set().union(*validation_reads_by_rank(run).values())


def validation_reads_by_rank(run: ScriptRun) -> dict[int, set[int]]:
    """Per rank, the ids it read after the launch's last optimizer step."""
    done_all = steps_made(run)
    return {
        rank: {sample for done, sample in fetches(run.observe_dir, rank) if done >= done_all}
        for rank in run.ranks()
    }


def unscored_problem(run: ScriptRun, lengths: list[int]) -> str | None:
    """Every validation sequence a rank read went through its model: after the last step, its
    token embedding read at least their residues (token_remap.py; gradients on or not). None
    when each rank's did."""
    done_all = steps_made(run)
    for rank, ids in validation_reads_by_rank(run).items():
        residues = sum(lengths[i] for i in ids if 0 <= i < len(lengths))
        embedded = sum(
            r["real"]
            for r in read_jsonl(run.observe_dir / protocol.tokens_file(rank))
            if isinstance(r.get("pstep"), int) and r["pstep"] >= done_all
            and isinstance(r.get("real"), int)
        )  # fmt: skip
        if embedded < residues:
            return (
                f"rank {rank} read {len(ids)} validation sequences ({residues} residues) and "
                f"its model embedded {embedded} residues after step {done_all}{CAUSE}the "
                "validation reads the sequences but never runs the model on them (a val_loss "
                "not computed from them)"
            )
    return None


def unsharded_problem(by_rank: dict[int, set[int]]) -> str | None:
    """The validation is sharded across the ranks: no rank reads more than its share of the
    validation sequences, ceil(n / W) (a sampler that pads the shards to equal size included);
    None when it is."""
    validated = set().union(*by_rank.values()) if by_rank else set()
    share = -(-len(validated) // max(len(by_rank), 1))
    over = {rank: len(ids) for rank, ids in by_rank.items() if len(ids) > share}
    if len(by_rank) < 2 or not over:
        return None
    return (
        f"validation reads per rank {[len(by_rank[r]) for r in sorted(by_rank)]} of "
        f"{len(validated)} sequences (a share is at most {share}){CAUSE}the validation is not "
        "sharded across the ranks (every rank evaluates every sequence)"
    )


def held_out_clusters(clusters: list[int], trained: set[int], validated: set[int]) -> set[int]:
    """The clusters validated and never trained on."""
    return {clusters[i] for i in validated} - {clusters[i] for i in trained}


def _grads(run: ScriptRun, rank: int) -> list[dict[str, Any]]:
    return [r.get("grad") or {} for r in step_records(run.observe_dir, rank)]


def _losses(run: ScriptRun) -> list[float]:
    return [float(i["loss"]) for i in lines(run) if "step" in i and "loss" in i]


def _grad_differs(a: dict[str, Any], b: dict[str, Any]) -> float:
    """How far two steps' gradient summaries are apart, relative to their size (0: equal)."""
    if a.get("digest") == b.get("digest"):
        return 0.0
    scale = max(float(a.get("norm") or 0.0), 1e-12)
    gap = abs(float(a.get("norm") or 0.0) - float(b.get("norm") or 0.0))
    return max(gap, max_abs_diff(a, b)) / scale


def step_losses(run: ScriptRun) -> dict[int, float]:
    """Step -> the loss rank 0 printed for it."""
    found = {}
    for item in lines(run):
        try:
            found[int(item["step"])] = float(item["loss"])
        except (KeyError, TypeError, ValueError):
            continue
    return found


def one_process_problem(printed: list[int], made: int, saved: int, steps: int) -> str | None:
    """Why a one-process run (exit 0) did not do what the contract asks: `made` optimizer steps,
    the steps of its printed loss lines, `saved` files left in its checkpoint dir."""
    if made != steps:
        return f"{made} optimizer steps (expected {steps})"
    if printed != list(range(1, steps + 1)):
        return f"loss lines printed for steps {printed[:5]}{'...' if len(printed) > 5 else ''}"
    if not saved:
        return "no checkpoint saved"
    return None


def loss_scale_problem(loss: float | None, band: tuple[float, float], classes: int) -> str | None:
    """Why step 1's printed loss is not an untrained tagger's mean cross-entropy per residue
    (within `band` times ln(classes))."""
    if loss is None:
        return "no loss printed for step 1"
    ratio = loss / math.log(classes)
    if not math.isfinite(ratio) or not band[0] <= ratio <= band[1]:
        return f"step 1's printed loss {loss:.4g} is x{ratio:.3g} ln {classes}"
    return None


def labels_problem(mine: dict[str, Any], relabelled: dict[str, Any]) -> str | None:
    """Why step 1's gradients with every label shifted show that the labels never reach the
    loss (the same gradients as with the dataset's labels)."""
    if not mine or not relabelled:
        return "no gradient recorded at step 1"
    if _grad_differs(mine, relabelled) <= GRAD_TOLERANCE:
        return "step 1's gradients are the same with other labels"
    return None


def train_detail(
    runs: Mapping[str, ScriptRun], steps: int, band: tuple[float, float], lengths: list[int]
) -> str:
    """Beyond the W=2 run: the one-process run, step 1's loss scale, the printed losses against
    the trained ones (checks_printed.py) and the labels' effect ('' when all hold)."""
    single, relabelled, run = runs["one_process"], runs["labels"], runs["train"]
    problems = []
    why = single.summary()
    if single.status == "ok":
        saved = sum(1 for f in single.launch.ckpt_dir.rglob("*") if f.is_file())
        why = one_process_problem(sorted(step_losses(single)), steps_made(single), saved, steps)
    if why:
        problems.append(
            f"as one process (python train.py): {why}{CAUSE}the script assumes torchrun (a "
            "process group, a rank or a world size other than 0 and 1 without RANK in the "
            "environment)"
        )
    why = loss_scale_problem(step_losses(run).get(1), band, CLASSES)
    if why:
        problems.append(
            f"{why}, expected x{band[0]:g}-{band[1]:g} for the mean cross-entropy per residue "
            f"of an untrained tagger{CAUSE}the printed loss is a sum (or multiplied by the "
            "residue count, or a mean per sequence), not the mean over the global batch's "
            "real residues"
        )
    trained, world = trained_losses(run, steps), len(run.ranks())
    why = printed_loss_problem(step_losses(run), trained, step_residues(run, lengths, steps), world)
    if why:
        problems.append(
            f"{why}{CAUSE}the printed numbers are made up or computed apart from the loss that "
            "trains (another batch, another model, a constant)"
        )
    if relabelled.status != "ok" or not steps_made(relabelled):
        problems.append(f"with other labels: {relabelled.summary()}")
    else:
        first = (_grads(run, 0) or [{}])[0], (_grads(relabelled, 0) or [{}])[0]
        why = labels_problem(*first)
        if why:
            problems.append(
                f"{why}{CAUSE}the labels never reach the loss (targets not copied from the "
                "dataset: zeros, or the tokens)"
            )
    return "; ".join(problems)


def embedded_problem(run: ScriptRun, lengths: list[int], steps: int) -> str | None:
    """Every real residue read for training is embedded once, and nothing else that is real:
    per rank, the amino-acid tokens its nn.Embedding read with gradients on over steps 1..N
    (token_remap.py) against the residues of the sequences it read for them. Padding with an
    amino acid embeds more, sequences cut short fewer. None when they agree."""
    for rank in run.ranks():
        read = {s: sum(n) for s, n in read_lengths(run, rank, lengths, steps).items()}
        embedded: dict[int, int] = {}
        literal = 0
        for record in read_jsonl(run.observe_dir / protocol.tokens_file(rank)):
            done, real, other = record.get("pstep"), record.get("real"), record.get("other")
            if not record.get("grad", True):  # an evaluation's forward
                continue
            if isinstance(done, int) and isinstance(real, int) and done < steps:
                embedded[done + 1] = embedded.get(done + 1, 0) + real
                literal += other if isinstance(other, int) else 0
        if literal:
            return (
                f"rank {rank}: the embedding read {literal} ids over steps 1..{steps} that are "
                f"neither amino acids nor this run's PAD_ID{CAUSE}padding with a literal id "
                "(e.g. 0) instead of drill_data.PAD_ID"
            )
        total_read, total_embedded = sum(read.values()), sum(embedded.values())
        if total_read == total_embedded:
            continue
        if not embedded:
            return (
                f"rank {rank}: no nn.Embedding read a token with gradients on in steps "
                f"1..{steps}{CAUSE}the starter's model (its nn.Embedding) is not what trains"
            )
        first = next(s for s in range(1, steps + 1) if read.get(s, 0) != embedded.get(s, 0))
        cause = (
            "padding with an amino-acid id (not PAD_ID), or a sequence embedded twice"
            if total_embedded > total_read
            else "sequences cut short (truncated), or read and never trained on"
        )
        return (
            f"rank {rank}: the embedding read {total_embedded} real tokens over steps 1..{steps} "
            f"for {total_read} residues read (step {first}: {embedded.get(first, 0)} for "
            f"{read.get(first, 0)}){CAUSE}{cause}"
        )
    return None


def mask_checks(
    runs: Mapping[str, ScriptRun], steps: int, band: tuple[float, float], lengths: list[int]
) -> list[Check]:
    """`masks.trains`: the W=2 run trains (trains()), so does one process, step 1's printed loss
    is a mean per residue, shifted labels change step 1's gradients and, when padding never
    reaches the loss, step 1's gradient is one process's on the same global batch
    (checks_same_batch.py); `batched_by_length`:
    batching_check. `padded` reads the
    W=2 run's sequences with another PAD_ID: when padding never reaches the loss (not as a
    target, not as a key the residues attend to), every step's gradients and the printed losses
    are the same."""
    run, padded = runs["train"], runs["pad"]
    ran, trained = trains(run, steps)
    more = train_detail(runs, steps, band, lengths) if ran else ""
    trains_check = check(
        "masks.trains", ran and not more, f"{trained}; {more}" if more else trained
    )
    batching = batching_check(run, lengths, steps) if ran else check(BATCHED, False, trained)
    if not ran or padded.status != "ok" or steps_made(padded) != steps:
        why = f"{trained}; with another PAD_ID: {padded.summary()}, {steps_made(padded)} steps"
        return [trains_check, check("masks.padding_never_in_loss", False, why), batching]
    worst, where = 0.0, ""
    for rank in run.ranks():
        for k, (a, b) in enumerate(zip(_grads(run, rank), _grads(padded, rank), strict=False)):
            gap = _grad_differs(a, b)
            if gap > worst:
                worst, where = gap, where or f"step {k + 1} on rank {rank}"
    mine, theirs = _losses(run), _losses(padded)
    loss_gap = [
        k + 1
        for k, (x, y) in enumerate(zip(mine, theirs, strict=False))
        if abs(x - y) > LOSS_TOLERANCE
    ]
    embedded = embedded_problem(run, lengths, steps)
    ok = worst <= GRAD_TOLERANCE and not loss_gap and embedded is None
    detail = (
        f"the same sequences padded with another PAD_ID: gradients differ by {worst:.3g} "
        f"(relative; first at {where or '-'}), printed losses differ at steps {loss_gap[:5]}"
    )
    if embedded is not None and worst <= GRAD_TOLERANCE and not loss_gap:
        detail += f"; {embedded}"
    elif not ok:
        detail += (
            f"{CAUSE}padding reaches the loss: padded positions counted as targets (no mask, "
            "or a mask off by one), residues attending to padded keys (no key_padding_mask), "
            "or a mean over padded length; or a run that is not deterministic (unseeded order)"
        )
    padding = check("masks.padding_never_in_loss", ok, detail)
    # padding that reaches the loss moves one process's gradient too: said once, by its check
    why = same_batch_problem(run, runs["same_batch"]) if ok and "same_batch" in runs else None
    if why:
        trains_check = check(
            "masks.trains",
            False,
            f"{trains_check['detail']}; {why}{CAUSE}each rank's loss is the mean over its own "
            "residues, then the ranks' means are averaged (the global mean weights every "
            "residue alike), or the gradients are reduced with another op than a sum, or packed "
            "sequences attend to their row-mates",
        )
    return [trains_check, padding, batching]


BATCHED = "masks.batched_by_length"


def batching_check(run: ScriptRun, lengths: list[int], steps: int) -> Check:
    """`masks.batched_by_length`: the W=2 run's steps batch sequences of similar length or
    pack several into a row (checks_batching.py), judged against the trained sequences."""
    found = rank_steps(run, lengths, steps)
    pool = sorted({s for r in run.ranks() for d, s in fetches(run.observe_dir, r) if d < steps})
    holds, seen = batching_verdict(found, [lengths[s] for s in pool if 0 <= s < len(lengths)])
    return check(BATCHED, holds, seen if holds else f"{seen}{CAUSE}random batches padded to "
                 "their longest sequence, or one sequence per forward")  # fmt: skip


def split_checks(run: ScriptRun, clusters: list[int], lengths: list[int]) -> list[Check]:
    """From the ids the W=2 run read for training (steps 1..N) and for validation (after step
    N): no cluster on both sides, and every sequence on one side, the validation over every
    held-out sequence once, each through the model (unscored_problem)."""
    steps = steps_made(run)
    trained = {i for _, ids in step_reads(run, 1, steps) for i in ids}
    validated = validation_reads(run)
    if run.status != "ok" or not trained or not validated:
        why = (
            f"{run.summary()}, {len(trained)} sequences read for training, "
            f"{len(validated)} after step {steps}"
        )
        return [
            check("split.by_cluster", False, why),
            check("split.validates_held_out", False, why),
        ]
    both = sorted({clusters[i] for i in trained} & {clusters[i] for i in validated})
    leaked = sorted(i for i in validated if clusters[i] in both)
    detail = (
        f"{len(trained)} sequences trained on, {len(validated)} validated; clusters on both "
        f"sides: {both[:8]}"
    )
    if both:
        detail += (
            f" ({len(leaked)} validation sequences have a near-duplicate in training)"
            f"{CAUSE}a split by sequence (random or by index), not by cluster"
        )
    held_out = held_out_clusters(clusters, trained, validated)
    unread = sorted(i for i, c in enumerate(clusters) if c in held_out and i not in validated)
    said = [item.get("val_sequences") for item in lines(run) if "val_loss" in item]
    held = f"validated {len(validated)} sequences of {len(held_out)} held-out clusters"
    held += f", rank 0 printed val_sequences {said} (expected [{len(validated)}])"
    unsharded = unsharded_problem(validation_reads_by_rank(run)) or unscored_problem(run, lengths)
    ok = bool(held_out) and not unread and said == [len(validated)] and unsharded is None
    if not held_out:
        held += f"{CAUSE}no cluster is held out of training (see split.by_cluster)"
    elif unread or said != [len(validated)]:
        held += (
            f"; held-out sequences never validated: {unread[:8]}{CAUSE}the validation is not "
            "sharded over every held-out sequence (the same shard on every rank: val[::W] "
            "without the rank's offset, or one rank's shard reported)"
        )
    elif unsharded is not None:
        held += f"; {unsharded}"
    return [
        check("split.by_cluster", not both, detail, {"shared_clusters": both}),
        check("split.validates_held_out", ok, held),
    ]


def epoch_problems(stream: list[tuple[int, list[int]]], expected: set[int]) -> list[str]:
    """Cut the reads, step by step, into epochs (an epoch ends with the step that completes
    `expected`): a sequence read twice before its epoch is complete is a problem."""
    problems: list[str] = []
    seen: set[int] = set()
    epoch = 1
    for step, ids in stream:
        for i in ids:
            if i in seen or i not in expected:
                missing = len(expected - seen)
                problems.append(
                    f"step {step}: sequence {i} read again in epoch {epoch} while {missing} "
                    "of its sequences were not yet read"
                    if i in seen
                    else f"step {step}: sequence {i} (not a training sequence) read"
                )
            seen.add(i)
        if seen >= expected:
            seen, epoch = set(), epoch + 1
    return problems


def same_order(stream: list[tuple[int, list[int]]], size: int) -> bool:
    """Whether the steps of the first epoch (those that read `size` sequences) come again in
    the same order next, step by step (each step's reads as a set)."""
    batches = [set(ids) for _, ids in stream]
    count, steps = 0, 0
    while steps < len(batches) and count < size:
        count, steps = count + len(batches[steps]), steps + 1
    return (
        count >= size
        and 2 * steps <= len(batches)
        and batches[:steps] == batches[steps : 2 * steps]
    )


def epoch_checks(
    run: ScriptRun,
    kill: ScriptRun,
    resume: ScriptRun,
    steps: int,
    kill_after: int,
    clusters: list[int],
) -> list[Check]:
    """The W=2 run reads every training sequence once per epoch across ranks (the training set:
    every sequence not validated of a cluster trained on), in a new order each epoch; the
    killed run's reads up to its checkpoint and the relaunch's reads continue the same way
    (nothing repeated, nothing skipped)."""
    stream = step_reads(run, 1, steps_made(run))
    validated = validation_reads(run)
    trained = {clusters[i] for _, ids in stream for i in ids}
    expected = {i for i, c in enumerate(clusters) if i not in validated and c in trained}
    if run.status != "ok":
        expected = set()
    problems = epoch_problems(stream, expected) if expected else [f"the run: {run.summary()}"]
    reads = sum(len(ids) for _, ids in stream)
    once_detail = (
        f"{reads} training reads of {len(expected)} training sequences over {len(stream)} steps"
    )
    if problems:
        once_detail += (
            "; "
            + "; ".join(problems[:3])
            + (
                f"{CAUSE}batches that lose sequences (drop_last) or shards that overlap across "
                "ranks (each rank samples the whole set, a bucket sampler not split by rank)"
            )
        )
    elif (outside := outside_reads(run)) is not None:  # every read as such, but not the path
        problems, once_detail = [outside], f"{once_detail}; {outside}"
    fresh = bool(expected) and reads >= 2 * len(expected) and not same_order(stream, len(expected))
    order_detail = f"{reads} training reads, {len(expected)} per epoch"
    if not fresh:
        order_detail += (
            f"; the second epoch reads the first one's order{CAUSE}the order is not drawn per "
            "epoch (DistributedSampler.set_epoch not called, or one generator seed for all)"
        )
    again = steps_made(resume)
    resumed_at = steps - again
    chain = step_reads(kill, 1, resumed_at) + [
        (resumed_at + s, ids) for s, ids in step_reads(resume, 1, again)
    ]
    resume_detail = (
        f"killed after step {kill_after}; the relaunch: {resume.summary()}, {again} steps "
        f"(resumed at step {resumed_at})"
    )
    ok = resume.status == "ok" and bool(expected) and 0 < again < steps
    if ok:
        # exact epochs; or, when the uninterrupted run has none, the same reads as it
        wrong = epoch_problems(chain, expected)
        same = [(k, sorted(ids)) for k, ids in chain] == [(k, sorted(ids)) for k, ids in stream]
        ok = not wrong or (bool(problems) and same)
        if not ok:
            resume_detail += (
                "; "
                + "; ".join(wrong[:3])
                + (
                    f"{CAUSE}the data position is not restored: the relaunch starts its epoch over "
                    "(or at another epoch's order) instead of at the checkpoint's step"
                )
            )
    return [
        check("epoch.exactly_once", not problems, once_detail),
        check("epoch.reshuffled", fresh, order_detail),
        check("epoch.resume_continues", ok, resume_detail),
    ]

"""The FSDP2-first round's checks (torch-free): what the harness recorded of each launch (the
parameters every optimizer step saw on every rank, the collectives of each backward, the samples
read, the files written into the checkpoint dir), judged against the contract (fsdp2.py).

The stretch phase's evidence helpers are reused: fsdp2_sharded (DTensor shards that add up to
the model), fsdp2_learns (the step-1 gradient against one process), was_killed. A relaunch at
another world size holds other shards, so it is compared with the uninterrupted run by the
whole model's norm (over every rank's shard), not shard by shard.

A checkpoint's files belong to the step that started its save (the records' `origin`: an
asynchronous save writes during the next step); a shard counts when torch.distributed.checkpoint
itself wrote it (`dcp`), never by its name; a relaunch after a kill is expected at the newest
checkpoint that was complete when the rank was killed (every file the uninterrupted run wrote
for that save, also written in the killed run)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from trainer_lab.files import FileRefused, read_head
from trainer_lab.grading.stretch_evidence import was_killed
from trainer_lab.grading.stretch_fsdp2 import _shard_norm, fsdp2_learns, fsdp2_sharded
from trainer_lab.result import Check
from trainer_lab.usercode.dataplan import global_batches
from trainer_lab.usercode.evidence import fetches, save_events, step_records
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

# mirror fsdp2_files/drill_data.py (a test keeps them equal)
DATASET_SIZE = 60
GLOBAL_BATCH = 12
BLOCKS = 3
HIDDEN = 24
# a Block's parameters (LayerNorm's weight and bias, Linear's weight and bias): its FSDP2 unit
# reduces a gradient of this many elements (padded to a multiple of W along dim 0: none at
# W=2, 3), an all_reduce on gloo, a reduce-scatter on NCCL
BLOCK_PARAMS = HIDDEN * HIDDEN + 3 * HIDDEN
BLOCK_PADDING = 1.25  # the most a block's padded gradient can exceed BLOCK_PARAMS by
# the whole model's norm after a step at W=3 against the uninterrupted W=2 run's: float32 sums
# in another order differ by ~1e-7 relative; a lost optimizer state or another batch by far more
NORM_TOLERANCE = 1e-5
CAUSE = "; likely cause: "


def full_norms(run: ScriptRun) -> dict[int, float]:
    """Optimizer step (from the step this launch started at: 0) -> the whole model's parameter
    norm after it, over every rank's shard; only the steps every rank recorded."""
    records = {rank: step_records(run.observe_dir, rank) for rank in run.ranks()}
    made = min((len(r) for r in records.values()), default=0)
    if not made:
        return {}
    norms = {0: _shard_norm(records, "pre")}
    for i in range(made):
        norms[i + 1] = _shard_norm(records, "post", i)
    return norms


def steps_made(run: ScriptRun) -> dict[int, int]:
    return {rank: len(step_records(run.observe_dir, rank)) for rank in run.ranks()}


def _close(a: float, b: float, tolerance: float = NORM_TOLERANCE) -> bool:
    return math.isclose(a, b, rel_tol=tolerance, abs_tol=1e-12)


def resumed_from(reference: ScriptRun, relaunch: ScriptRun) -> int | None:
    """The step of the uninterrupted run whose parameters the relaunch started from (its first
    step's parameters, the whole model), or None when it matches no step."""
    start = full_norms(relaunch).get(0)
    if start is None:
        return None
    matches = [
        (abs(norm - start), step)
        for step, norm in full_norms(reference).items()
        if _close(norm, start, 1e-6)
    ]
    return min(matches)[1] if matches else None


ROOT_ONLY = (
    "fully_shard on the root only: the whole model is one unit, gathered whole in the forward "
    "and reduce-scattered once (no per-block unit, no overlap, the peak memory of the unsharded "
    "model)"
)


def block_reduces(comm: dict[str, Any]) -> tuple[int, int] | None:
    """(the reduces of one Block's gradient size, the largest reduce) in a backward's
    collectives; None when the flight recorder's ring filled (what was sent is unknown)."""
    if comm.get("elements") == -1:
        return None
    sizes = [n for n in comm.get("reduces") or [] if isinstance(n, int)]
    sized = [n for n in sizes if BLOCK_PARAMS <= n <= BLOCK_PADDING * BLOCK_PARAMS]
    return len(sized), max(sizes, default=0)


def per_block(run: ScriptRun) -> tuple[bool, str]:
    """Every recorded step's backward (between the end of the forward and the optimizer step)
    issued at least BLOCKS + 1 collectives on every rank, among them a reduce of each Block's
    gradient (BLOCK_PARAMS elements: FSDP2's reduce-scatter per fully_shard-ed block) and none
    of several blocks' gradients at once: a root-only fully_shard reduces the whole model's
    gradient in one collective, whatever other collectives it adds."""
    fewest: dict[int, int] = {}
    sized: dict[int, int] = {}
    largest: dict[int, int] = {}
    for rank in run.ranks():
        comms = [
            s["comm"]
            for s in step_records(run.observe_dir, rank)
            if isinstance(s.get("comm"), dict) and isinstance(s["comm"].get("ops"), int)
        ]
        if comms:
            fewest[rank] = min(c["ops"] for c in comms)
        judged = [r for r in map(block_reduces, comms) if r is not None]
        if judged:
            sized[rank] = min(n for n, _ in judged)
            largest[rank] = max(m for _, m in judged)
    if not fewest:
        return False, "no collectives recorded in any backward (not distributed?)"
    seen = ", ".join(f"rank {r}: {n}" for r, n in sorted(fewest.items()))
    text = f"fewest collectives in a backward {seen} (expected at least {BLOCKS + 1})"
    if min(fewest.values()) < BLOCKS + 1:
        return False, f"{text}{CAUSE}{ROOT_ONLY}"
    if not sized:
        return True, text  # every backward filled the recorder's ring: sizes unknown
    blocks = ", ".join(f"rank {r}: {n}" for r, n in sorted(sized.items()))
    text = (
        f"{text}; fewest reduces of one block's gradient ({BLOCK_PARAMS} elements) in a "
        f"backward {blocks} (expected {BLOCKS}), the largest reduce {max(largest.values())} "
        "elements"
    )
    if min(sized.values()) < BLOCKS or max(largest.values()) > 2 * BLOCK_PARAMS:
        return False, (
            f"{text}{CAUSE}no reduce-scatter of each block's gradient: {ROOT_ONLY}; the other "
            "collectives do not carry the blocks' gradients"
        )
    return True, text


def once_per_epoch(run: ScriptRun) -> tuple[bool, str]:
    """Every step's global batch (all ranks' reads for it) is GLOBAL_BATCH samples, and every
    complete epoch reads every sample exactly once."""
    batches = global_batches(run.observe_dir, len(run.ranks()))
    sizes = {s: len(ids) for s, ids in batches.items() if len(ids) != GLOBAL_BATCH}
    if sizes:
        return False, (
            f"global batch sizes {sizes} (expected {GLOBAL_BATCH}){CAUSE}a per-rank batch that "
            "does not come from GLOBAL_BATCH // W, or samples read and not trained on"
        )
    per_epoch = DATASET_SIZE // GLOBAL_BATCH
    for start in range(1, max(batches, default=0) - per_epoch + 2, per_epoch):
        read = Counter(i for s in range(start, start + per_epoch) for i in batches.get(s, []))
        if read != Counter(range(DATASET_SIZE)):
            twice = sorted(i for i, n in read.items() if n > 1)[:5]
            return False, (
                f"steps {start}-{start + per_epoch - 1} (an epoch) read {len(read)} distinct "
                f"samples of {DATASET_SIZE}, some twice: {twice}{CAUSE}the ranks' shards "
                "overlap (each rank reads the same batch) or the epoch's order is not one "
                "permutation"
            )
    return True, f"every epoch read each of the {DATASET_SIZE} samples once"


def sharded_checks(run: ScriptRun, one: ScriptRun, steps: int) -> list[Check]:
    """The uninterrupted W=2 run and one process served its first global batches."""
    ok, detail = fsdp2_sharded(run, one)
    if ok:
        ok, blocks = per_block(run)
        detail = f"{detail}; {blocks}"
    if run.status != "ok":
        ok, detail = False, f"{run.summary()}; {detail}"
    made = steps_made(run)
    trained, learns = fsdp2_learns(run, run, one, DATASET_SIZE // GLOBAL_BATCH)
    count = f"optimizer steps {made} (expected {steps} on each rank)"
    if any(n != steps for n in made.values()):
        trained = False
    epochs_ok, epochs = once_per_epoch(run)
    return [
        check("sharded.per_block", ok, detail),
        check("sharded.trains", trained and epochs_ok, f"{count}; {learns}; {epochs}"),
    ]


def started_at(event: dict[str, Any]) -> object:
    """The optimizer step count when the save writing this began (the step it ran at, for a
    record without an origin)."""
    return event.get("origin", event.get("pstep"))


def save_writes(run: ScriptRun, after_step: int) -> dict[int, list[dict[str, Any]]]:
    """Rank -> the files (records) it wrote with bytes in the save begun after `after_step`."""
    found: dict[int, list[dict[str, Any]]] = {rank: [] for rank in run.ranks()}
    for event in save_events(run.observe_dir, run.ranks()):
        if event["event"] in ("write", "save") and started_at(event) == after_step:
            found.setdefault(event["rank"], []).append(event)
    return found


def shard_files(run: ScriptRun, after_step: int) -> dict[int, list[str]]:
    """Rank -> the files it wrote into the checkpoint dir in the save after `after_step`."""
    return {r: [str(e.get("path")) for e in w] for r, w in save_writes(run, after_step).items()}


DCP_METADATA = b"torch.distributed.checkpoint.metadata"


def is_dcp_metadata(path: Path) -> bool:
    """Whether the file is DCP's .metadata: a pickle of its Metadata class (read as bytes, never
    unpickled)."""
    try:
        head, _ = read_head(path, 4096)
    except (FileRefused, OSError):
        return False
    return head.startswith(b"\x80") and DCP_METADATA in head


def dcp_dirs(ckpt_dir: Path) -> list[Path]:
    """The directories under ckpt_dir that hold DCP's .metadata file."""
    return sorted(p.parent for p in ckpt_dir.rglob(".metadata") if is_dcp_metadata(p))


def _is_global_metadata(path: str) -> bool:
    return Path(path).name in (".metadata", ".metadata.tmp")


def every_rank_writes(run: ScriptRun, after_step: int) -> tuple[bool, str]:
    """In the save after `after_step` every rank wrote a shard through torch.distributed.checkpoint
    (a .distcp file its storage writer opened, not a file of that name from the script), one
    rank (the coordinator) wrote DCP's .metadata, and DIR holds DCP's .metadata."""
    writes = save_writes(run, after_step)
    shards = {
        r: [e for e in w if str(e.get("path")).endswith(".distcp") and e.get("dcp")]
        for r, w in writes.items()
    }
    named = {
        r: [e for e in w if str(e.get("path")).endswith(".distcp") and not e.get("dcp")]
        for r, w in writes.items()
    }
    silent = [r for r, paths in shards.items() if not paths]
    seen = ", ".join(f"rank {r}: {len(p)} shard files" for r, p in sorted(shards.items()))
    text = f"the save after step {after_step}: {seen}"
    if silent and any(named.values()):
        rank = min(r for r, w in named.items() if w)
        paths = sorted({str(e.get("path")) for e in named[rank]})
        how = sorted({str(e["how"]) for e in named[rank] if e.get("how")}) or ["open"]
        return False, (
            f"{text} written by torch.distributed.checkpoint; rank {rank} wrote "
            f"{len(paths)} .distcp files itself ({', '.join(how)}: {paths[0]}){CAUSE}"
            "not a DCP save: files named like DCP's shards, written by the script (a full or "
            "local state torch.saved), so nothing says they are sharded or that DCP can load them"
        )
    if silent:
        return False, (
            f"{text}{CAUSE}not a sharded DCP save: rank 0 gathers the full state and saves it "
            "alone, or each rank torch.saves its local shard (no .distcp shards, no .metadata)"
        )
    coordinators = sorted(
        r
        for r, w in writes.items()
        if any(e.get("dcp") and _is_global_metadata(str(e.get("path"))) for e in w)
    )
    if len(coordinators) > 1:
        return False, (
            f"{text}; ranks {coordinators} each wrote a .metadata{CAUSE}every rank saved alone "
            "(no_dist, or a process group of one): copies, not one sharded checkpoint"
        )
    dirs = dcp_dirs(run.launch.ckpt_dir)
    if not dirs:
        return False, (
            f"{text}, but no DCP .metadata in DIR{CAUSE}not torch.distributed.checkpoint (a "
            ".metadata that is not DCP's)"
        )
    return True, f"{text}; {len(dirs)} DCP directories (.metadata beside the shards)"


SAVE_RECORDS = ("write", "save", "create", "rename")


def save_records(run: ScriptRun, step: int) -> Counter[int]:
    """Rank -> how many files it wrote, created or renamed into place for the save begun after
    `step`."""
    return Counter(
        e["rank"]
        for e in save_events(run.observe_dir, run.ranks())
        if e["event"] in SAVE_RECORDS and started_at(e) == step
    )


def newest_complete_at_kill(
    reference: ScriptRun, killed: ScriptRun, newest: int, every: int
) -> tuple[int, str]:
    """The newest checkpoint (from `newest` down, every `every` steps) that was complete when
    the rank was killed: each rank had written every file the uninterrupted run wrote for that
    save (a synchronous save is done before the next step; an asynchronous one may still be
    writing, and its checkpoint is then no restart point). With its reason, when not `newest`."""
    why = ""
    for step in range(newest, 0, -every) if every > 0 else (newest,):
        want, got = save_records(reference, step), save_records(killed, step)
        short = {r: (got.get(r, 0), n) for r, n in want.items() if got.get(r, 0) < n}
        if not short:
            return step, why
        if not why:
            rank, (wrote, of) = min(short.items())
            why = (
                f"the save after step {step} was not complete at the kill (rank {rank} had "
                f"written {wrote} of its {of} files: an asynchronous save still under way)"
            )
    return newest, ""


def resumed_detail(reference: ScriptRun, relaunch: ScriptRun, expected: int) -> tuple[bool, str]:
    """The relaunch started from the uninterrupted run's parameters after step `expected` and
    made the rest of the steps on every rank (where it started is read from its records even
    when it failed later)."""
    at = resumed_from(reference, relaunch)
    made = steps_made(relaunch)
    total = len(step_records(reference.observe_dir, 0))
    ended = "" if relaunch.status == "ok" else f"; then {relaunch.summary()}"
    if at is None and relaunch.status != "ok":
        return False, f"the relaunch: {relaunch.summary()}"
    where = "no step of the uninterrupted run" if at is None else f"step {at}"
    text = f"the relaunch started from the parameters after {where}, made {made} steps"
    if at != expected:
        return False, (
            f"{text} (expected step {expected}, the newest complete checkpoint){ended}{CAUSE}the "
            "newest checkpoint picked by name in string order (step-8 after step-12), a torn or "
            "incomplete one loaded, or the shards not loaded on every rank"
        )
    if relaunch.status != "ok":
        return False, f"{text}{ended}"
    if any(n != total - expected for n in made.values()):
        return False, (
            f"{text} (expected {total - expected} on each rank){CAUSE}the step counter restored "
            "off by one (the checkpoint's step + 1, or the step before the save)"
        )
    return True, f"{text}, as expected"


def atomic_checks(torn: ScriptRun, relaunch: ScriptRun, reference: ScriptRun, newest: int) -> Check:
    """A rank's shard of the save after the tear step was cut in half (the rank SIGKILLed): the
    relaunch resumes from the newest complete checkpoint, `newest`."""
    torn_events = [e for e in save_events(torn.observe_dir, torn.ranks()) if e["event"] == "torn"]
    if not torn_events:
        return check("dcp.atomic", False, f"no file was torn: {torn.summary()}")
    path = torn_events[0].get("path")
    ok, detail = resumed_detail(reference, relaunch, newest)
    if not ok and relaunch.status != "ok":
        detail += (
            f"{CAUSE}a checkpoint that is not atomic: the relaunch loaded the torn one "
            "(written in place, no commit marker; DCP's .metadata alone is not one when other "
            "files of the step come after it)"
        )
    return check("dcp.atomic", ok, f"rank {torn_events[0]['rank']}'s {path} torn; {detail}")


def dcp_checks(
    run: ScriptRun, torn: ScriptRun, relaunch: ScriptRun, first_save: int, newest: int
) -> list[Check]:
    ok, detail = every_rank_writes(run, first_save)
    return [check("dcp.every_rank_writes", ok, detail), atomic_checks(torn, relaunch, run, newest)]


def _global_batch(run: ScriptRun, step: int) -> Counter[int]:
    return Counter(global_batches(run.observe_dir, len(run.ranks())).get(step, []))


def reshard_checks(
    reference: ScriptRun, killed: ScriptRun, relaunch: ScriptRun, newest: int, every: int = 0
) -> list[Check]:
    """A rank SIGKILLed after a step at W=2, the run relaunched at W=3: it resumes from the
    newest checkpoint complete at the kill (`newest`, or `every` steps before while a save was
    under way: newest_complete_at_kill); each of its steps trains on the uninterrupted run's
    global batch of that step (every rank GLOBAL_BATCH // 3 of it), and its parameters follow
    that run's."""
    if not was_killed(killed):
        why = f"no rank was killed: {killed.summary()}"
        return [check(n, False, why) for n in CHECK_NAMES_RESHARD]
    complete, unfinished = newest_complete_at_kill(reference, killed, newest, every)
    at = resumed_from(reference, relaunch)
    if unfinished and at == newest:  # it loaded whole what was still being written: fine
        unfinished += ", and the relaunch found it whole"
    elif unfinished:
        newest = complete
    ok, detail = resumed_detail(reference, relaunch, newest)
    if unfinished:
        detail = f"{unfinished}; {detail}"
    base = newest if at is None else at
    made = min(steps_made(relaunch).values(), default=0)
    wrong: list[str] = []
    mine = GLOBAL_BATCH // max(len(relaunch.ranks()), 1)
    uneven: dict[int, dict[int, int]] = {}
    for rank in relaunch.ranks():
        counts = Counter(done for done, _ in fetches(relaunch.observe_dir, rank))
        off = {done + 1: n for done, n in counts.items() if n != mine and done < made}
        if off:
            uneven[rank] = off
    for j in range(1, made + 1):
        got = _global_batch(relaunch, j)
        want = _global_batch(reference, base + j)
        if got != want and len(wrong) < 2:
            wrong.append(
                f"step {base + j}: read {sorted(got.elements())[:6]}.. ({sum(got.values())}), "
                f"the uninterrupted run {sorted(want.elements())[:6]}.. ({sum(want.values())})"
            )
    batch_ok = made > 0 and not wrong and not uneven
    batch = f"relaunch steps after step {base}: " + (
        "; ".join(wrong) if wrong else f"each the uninterrupted run's global batch ({made} steps)"
    )
    if uneven:
        first = min(uneven)
        batch += f"; rank {first} read per step {uneven[first]} samples (expected {mine} each)"
    if wrong or uneven:
        batch += (
            f"{CAUSE}the per-rank batch kept at W=3 (the global batch grows with W), the data "
            "position restarted (from 0 or the epoch's start) instead of the checkpoint's step, "
            "or an order that depends on W"
        )
    if made == 0:
        batch = f"the relaunch made no step: {relaunch.summary()}"
    ref, new = full_norms(reference), full_norms(relaunch)
    drift = [
        (base + j, new[j], ref.get(base + j))
        for j in range(1, made + 1)
        if ref.get(base + j) is None or not _close(new[j], ref[base + j])
    ]
    follow_ok = made > 0 and at is not None and not drift
    if at is None:
        follow = "the relaunch did not start from a step of the uninterrupted run"
    elif drift:
        step, got, want = drift[0]
        follow = (
            f"after step {step} the model's norm is {got:.7g}, the uninterrupted run's "
            f"{want if want is None else f'{want:.7g}'} (tolerance {NORM_TOLERANCE:g} relative)"
            f"{CAUSE}the optimizer state not saved or not loaded (Adam's moments start over), "
            "another batch trained on, or the learning rate schedule not restored"
        )
    else:
        follow = f"the whole model followed the uninterrupted run for {made} steps"
    return [
        check("reshard.resumes_newest", ok, detail),
        check("reshard.global_batch", batch_ok, batch),
        check("reshard.continues", follow_ok, follow),
    ]


CHECK_NAMES_RESHARD = ("reshard.resumes_newest", "reshard.global_batch", "reshard.continues")

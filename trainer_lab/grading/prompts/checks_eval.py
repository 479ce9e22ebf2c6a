"""The distributed-evaluation round's checks (torch-free): what rank 0 printed in each launch,
read as JSON lines, judged against the contract (evaluation.py)."""

from __future__ import annotations

import json
from typing import Any

from trainer_lab.grading.checks_run import params_in_sync
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import fetches, step_records
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

EVAL_SIZE = 25  # mirrors eval_files/drill_data.py (a test keeps them equal)
EVAL_BASE = 10_000  # the eval samples' ids among the recorded reads (drill_data.EVAL_BASE)
TOLERANCE = 1e-5  # float32 sums in another order differ by far less; a wrong count by far more
CAUSE = "; likely cause: "


def lines(run: ScriptRun) -> list[dict[str, Any]]:
    """Rank 0's stdout, the lines that parse as JSON objects."""
    path = run.stdout_path(0)
    found = []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            found.append(item)
    return found


def evals(run: ScriptRun) -> list[dict[str, Any]]:
    return [item for item in lines(run) if "eval_step" in item]


def eval_reads(run: ScriptRun) -> dict[int, set[int]]:
    """Optimizer steps this launch's ranks had made -> the eval samples read then (any rank):
    the harness's record of the dataset's reads, whatever the script printed."""
    found: dict[int, set[int]] = {}
    for rank in run.ranks():
        for done, sample in fetches(run.observe_dir, rank):
            if EVAL_BASE <= sample < EVAL_BASE + EVAL_SIZE:
                found.setdefault(done, set()).add(sample - EVAL_BASE)
    return found


def unread(run: ScriptRun, steps_done: int | None = None) -> int:
    """How many eval samples no rank read after `steps_done` optimizer steps (None: at all)."""
    reads = eval_reads(run)
    if steps_done is None:
        return EVAL_SIZE - len(set().union(*reads.values()))
    return EVAL_SIZE - len(reads.get(steps_done, set()))


def replicated(run: ScriptRun) -> list[str]:
    """At W > 1, the ranks that read every eval sample themselves (the eval is not sharded)."""
    if run.launch.world_size < 2:
        return []
    whole = set(range(EVAL_BASE, EVAL_BASE + EVAL_SIZE))
    return [
        f"rank {rank}"
        for rank in run.ranks()
        if whole <= {sample for _, sample in fetches(run.observe_dir, rank)}
    ]


NOT_EVALUATED = (
    f"{CAUSE}the printed numbers are not computed from the eval set read in this run (constants, "
    "or cached numbers replayed)"
)


def other_rank_lines(run: ScriptRun) -> list[str]:
    """Ranks other than 0 that printed an eval or best line (the contract: rank 0 prints)."""
    noisy = []
    for rank in run.ranks()[1:]:
        try:
            text = run.stdout_path(rank).read_text(errors="replace")
        except OSError:
            continue
        if '"eval_step"' in text or '"best_step"' in text:
            noisy.append(f"rank {rank}")
    return noisy


def _number(item: dict[str, Any], key: str) -> float | None:
    value = item.get(key)
    return float(value) if isinstance(value, int | float) else None


def _world(run: ScriptRun) -> str:
    return f"W={max(run.launch.world_size, 1)}"


def exact_checks(runs: list[ScriptRun]) -> list[Check]:
    """--eval-only at W=1, 2 and 3 on the same (initial) model: one eval line each, over
    EVAL_SIZE samples, the same loss and accuracy."""
    seen: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    causes: list[str] = []
    for run in runs:
        found = evals(run)
        if run.status != "ok" or len(found) != 1:
            problems.append(f"{_world(run)}: {run.summary()}, {len(found)} eval lines (expected 1)")
        elif replicated(run):
            problems.append(f"{_world(run)}: {', '.join(replicated(run))} read every eval sample")
            causes.append("every rank evaluates all samples (replicated, not sharded)")
        elif unread(run):
            problems.append(f"{_world(run)}: {unread(run)} of {EVAL_SIZE} eval samples never read")
            causes.append(NOT_EVALUATED.removeprefix(CAUSE))
        else:
            seen[_world(run)] = found[0]
    counts = {w: item.get("count") for w, item in seen.items()}
    wrong = {w: c for w, c in counts.items() if c != EVAL_SIZE}
    count_detail = ", ".join(f"{w}: count {c}" for w, c in counts.items())
    if wrong:
        count_detail += (
            f"{CAUSE}a sampler that pads the shards (DistributedSampler duplicates samples "
            "when the set does not divide by W) or an eval over one rank's shard only"
        )
    count_ok = not problems and not wrong
    values = {w: (_number(item, "loss"), _number(item, "accuracy")) for w, item in seen.items()}
    base = values.get("W=1")
    differ = [
        w
        for w, (loss, acc) in values.items()
        if base is None
        or None in (loss, acc, *base)
        or abs(loss - base[0]) > TOLERANCE  # type: ignore[operator]
        or abs(acc - base[1]) > TOLERANCE  # type: ignore[operator]
    ]
    same_detail = ", ".join(f"{w}: loss {v[0]}, accuracy {v[1]}" for w, v in values.items())
    if differ:
        same_detail += (
            f"{CAUSE}the global metric is not sum over every sample / number of samples: a mean "
            "of per-rank means over unequal shards, padded duplicates counted, one rank's shard, "
            "or the model left in train mode (BatchNorm's batch statistics per shard)"
        )
    head = "; ".join(problems)
    if causes:
        head += CAUSE + "; ".join(dict.fromkeys(causes))
    return [
        check(
            "exact.count_is_eval_size",
            count_ok,
            "; ".join(p for p in (head, count_detail) if p),
            {"counts": counts},
        ),
        check(
            "exact.same_at_every_world_size",
            not problems and not differ,
            "; ".join(p for p in (head, same_detail) if p),
            {"values": values},
        ),
    ]


def trains(run: ScriptRun, steps: int) -> tuple[bool, str]:
    """Exit 0 after `steps` optimizer steps on every rank (the harness counts them), the
    replicas identical after each (data parallel)."""
    counts = {rank: len(step_records(run.observe_dir, rank)) for rank in run.ranks()}
    seen = ", ".join(f"rank {r}: {n}" for r, n in counts.items())
    detail = f"{run.summary()}, optimizer steps {seen} (expected {steps} on each rank)"
    if run.status != "ok" or any(n != steps for n in counts.values()):
        return False, detail
    synced, why = params_in_sync(run)
    return synced, detail if synced else f"{detail}; {why}"


def during_checks(run: ScriptRun, steps: int, every: int) -> list[Check]:
    """The W=2 training run: exits 0 after `steps` optimizer steps (observed by the harness),
    and evaluates the whole eval set after every `every`-th step: rank 0 prints each eval line,
    and the ranks read every eval sample then."""
    found = {i["eval_step"]: i.get("count") for i in evals(run)}
    expected = list(range(every, steps + 1, every))
    if steps % every:
        expected.append(steps)
    missing = [s for s in expected if s not in found]
    miscounted = {s: c for s, c in found.items() if c != EVAL_SIZE}
    not_read = {s: unread(run, s) for s in expected if s in found and unread(run, s)}
    noisy = other_rank_lines(run)
    detail = f"evals at steps {sorted(found)} (expected {expected})"
    if miscounted:
        detail += f", counts {miscounted} (expected {EVAL_SIZE})"
    if missing or miscounted:
        detail += (
            f"{CAUSE}eval not run on every rank after every --eval-every step and after step "
            "N, or padded"
        )
    elif not_read:
        detail += f", eval samples never read at step {not_read}{NOT_EVALUATED}"
    elif noisy:
        detail += (
            f"; {', '.join(noisy)} also printed eval or best lines{CAUSE}every rank prints "
            "(the contract: rank 0 prints, the other ranks print none)"
        )
    ran, trained = trains(run, steps)
    return [
        check("during.trains", ran, trained),
        check(
            "during.evals_every_e",
            not missing and not miscounted and not not_read and not noisy,
            detail,
        ),
    ]


def best_checks(
    kill: ScriptRun,
    resume: ScriptRun,
    best_eval: ScriptRun,
    best_eval_shifted: ScriptRun,
    relaunch_evals: list[int] | None = None,
) -> list[Check]:
    """After a rank is killed and the run relaunched: the final best line names the lowest eval
    loss printed before and after the restart, and --eval-only on DIR evaluates that model (on
    the eval values of the run that printed it: `best_eval` the killed run's,
    `best_eval_shifted` the relaunch's). `relaunch_evals`: the eval steps the relaunch prints
    when it resumes at the newest checkpoint (None: not checked); --eval-only must read the
    eval set, and its numbers change with the eval values."""
    before = [(i["eval_step"], _number(i, "loss")) for i in evals(kill)]
    printed = before + [(i["eval_step"], _number(i, "loss")) for i in evals(resume)]
    printed = [(s, v) for s, v in printed if v is not None]
    finals = [i for i in lines(resume) if "best_step" in i]
    if not printed or not finals or resume.status != "ok":
        why = f"relaunch: {resume.summary()}, {len(finals)} best lines, {len(printed)} evals"
        return [
            check("best.survives_restart", False, why),
            check("best.checkpoint_is_best", False, why),
        ]
    true_step, true_loss = min(printed, key=lambda p: p[1])  # type: ignore[arg-type,return-value]
    final = finals[-1]
    said_step, said_loss = final.get("best_step"), _number(final, "best_loss")
    kept = said_step == true_step and said_loss is not None and abs(said_loss - true_loss) <= 1e-6
    kept_detail = (
        f"evals {printed}; the relaunch's best: step {said_step}, loss {said_loss} (expected "
        f"step {true_step}, loss {true_loss})"
    )
    after = [i["eval_step"] for i in evals(resume)]
    resumed = relaunch_evals is None or after == relaunch_evals
    if not kept:
        kept_detail += (
            f"{CAUSE}the best metric is not restored from DIR on a restart, or the best is "
            "picked by file name (string order) instead of by the metric"
        )
    elif not resumed:
        kept_detail += (
            f"; the relaunch evaluated steps {after} (expected {relaunch_evals}: it resumes at "
            f"the newest checkpoint){CAUSE}the relaunch resumed from an older checkpoint than "
            "the newest (picked by file name in string order: ckpt-8 sorts after ckpt-12) and "
            "replayed steps"
        )
    best_eval_original = best_eval
    if (true_step, true_loss) not in before:
        best_eval = best_eval_shifted  # the best came after the restart, on its values
    got = evals(best_eval)
    loss = _number(got[0], "loss") if len(got) == 1 else None
    holds = best_eval.status == "ok" and loss is not None and abs(loss - true_loss) <= TOLERANCE
    held_detail = (
        f"--eval-only on DIR at {_world(best_eval)}: {best_eval.summary()}, loss {loss} "
        f"(best {true_loss})"
    )
    other = best_eval_shifted if best_eval is not best_eval_shifted else best_eval_original
    other_got = evals(other)
    other_loss = _number(other_got[0], "loss") if len(other_got) == 1 else None
    if not holds:
        held_detail += (
            f"{CAUSE}the best checkpoint in DIR is not the model of the lowest eval loss, or "
            "--eval-only loads it on rank 0 only (the other ranks score another model)"
        )
    elif other.status != "ok" or other_loss is None:
        holds = False
        held_detail += (
            f"; at {_world(other)}: {other.summary()}, {len(other_got)} eval lines (expected 1)"
        )
    elif unread(best_eval) or unread(other):
        missed = max(unread(best_eval), unread(other))
        holds = False
        held_detail += f", {missed} of {EVAL_SIZE} eval samples never read{NOT_EVALUATED}"
    elif other_loss is not None and other_loss == loss:
        holds = False
        held_detail += (
            f"; the same loss on other eval values ({_world(other)}: {other_loss}){NOT_EVALUATED}"
        )
    return [
        check("best.survives_restart", kept and resumed, kept_detail, {"best_step": true_step}),
        check("best.checkpoint_is_best", holds, held_detail),
    ]

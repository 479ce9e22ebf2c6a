"""The preemption round's checks (torch-free): what the harness recorded of each launch (the
SIGTERMs it sent, every optimizer step's parameter digests, the samples read, when each rank's
script returned), judged against the contract (preemption.py)."""

from __future__ import annotations

import random
from typing import Any

from trainer_lab.grading.prompts.checks_fsdp2_prompt import started_at
from trainer_lab.result import Check
from trainer_lab.root_cause import read_failures
from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import (
    fetches,
    save_events,
    script_end_time,
    script_ended,
    shutdown_race_end,
    step_records,
    term_records,
)
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

CAUSE = "; likely cause: "
NO_HANDLER = (
    "no SIGTERM handler on that rank (installed on rank 0 only, or after the signal came), or "
    "a handler that re-raises or restores the default action"
)


def digests(run: ScriptRun, rank: int) -> list[str]:
    """The parameter digest after each optimizer step of `rank` in this launch, in order."""
    return [str(r["post"].get("digest")) for r in step_records(run.observe_dir, rank)]


def first_pre(run: ScriptRun, rank: int) -> str | None:
    records = step_records(run.observe_dir, rank)
    return str(records[0]["pre"].get("digest")) if records and records[0].get("pre") else None


def steps_done(run: ScriptRun) -> dict[int, int]:
    return {rank: len(step_records(run.observe_dir, rank)) for rank in run.ranks()}


def steps_begun(run: ScriptRun) -> dict[int, int]:
    """The last step each rank began: its optimizer steps, or one more when it read samples
    after its last (it went into the next step and failed there)."""
    begun = steps_done(run)
    for rank in run.ranks():
        reads = [done for done, _ in fetches(run.observe_dir, rank)]
        begun[rank] = max([begun[rank], *(done + 1 for done in reads)])
    return begun


PEER_LEFT = (
    "a rank went on into a collective after another had left: the ranks do not stop after the "
    "same step (no agreement before stopping)"
)


WAITS = (
    "after the signal a rank waits in a collective another rank never joins: the ranks do not "
    "stop after the same step (no agreement before stopping)"
)


def exits_in_grace(run: ScriptRun, grace_s: float) -> tuple[bool, str]:
    """Every rank got SIGTERM, its script returned exit 0 within `grace_s` of the first, and the
    launch ended ok."""
    problems: list[str] = []
    causes: list[str] = []
    seen: list[str] = []
    raised = {f.get("rank"): f for f in read_failures(run.run_dir)}
    for rank in run.ranks():
        terms = term_records(run.observe_dir, rank)
        code = script_ended(run.observe_dir, rank)
        end = script_end_time(run.observe_dir, rank)
        race = shutdown_race_end(run.observe_dir, rank) if run.status == "ok" else None
        if race is not None:  # its work was done: gloo's shutdown race ended it (a run note)
            code, end = 0, race
        if not terms and code is not None:
            seen.append(f"rank {rank}: no SIGTERM (it ended first)")
            continue
        if not terms:
            seen.append(f"rank {rank}: no SIGTERM (stopped before its signal came)")
            continue
        first = terms[0]
        got = f"rank {rank}: SIGTERM {first.get('why')}"
        if len(terms) > 1:
            got += f", again {terms[1].get('why')}"
        if (code is None or end is None) and rank in raised:
            failure = raised[rank]
            problems.append(f"{got}; then raised {failure.get('type')} ({failure.get('where')})")
            causes.append(PEER_LEFT)
        elif (code is None or end is None) and run.status == "timeout":
            problems.append(f"{got}; its script never returned (stopped by the harness)")
            causes.append(WAITS)
        elif code is None or end is None:
            problems.append(f"{got}; its script never returned (killed)")
            last = terms[-1]
            if len(terms) > 1 and str(last.get("why", "")).startswith(protocol.TERM_DURING_SAVE):
                causes.append(
                    "the second SIGTERM killed the rank in the middle of its save: the handler "
                    "is gone after the first (one-shot, or the default action restored)"
                )
            else:
                causes.append(NO_HANDLER)
        elif code != 0:
            problems.append(f"{got}; exit {code}")
            causes.append(
                "the handler or the stop path exits non-zero (a preempted job that is "
                "requeued must end with 0: the scheduler reads anything else as a failure)"
            )
        elif end - float(first["time"]) > grace_s:
            problems.append(
                f"{got}; returned {end - float(first['time']):.1f} s after it "
                f"(grace {grace_s:.0f} s)"
            )
            causes.append(
                "work after the signal past the grace period (a sleep, a wait for "
                "the next periodic checkpoint, an eval before exiting)"
            )
        else:
            how = "ended by gloo's shutdown race after its work" if race is not None else "exit 0"
            seen.append(f"{got}; {how} {end - float(first['time']):.1f} s after it")
    ok = not problems and run.status == "ok"
    detail = "; ".join(problems + seen)
    if run.status != "ok":
        detail = f"{run.summary()}; {detail}"
    if causes:
        detail += CAUSE + "; ".join(dict.fromkeys(causes))
    elif not ok:
        detail += CAUSE + "a rank failed after stopping (a collective the other ranks never join)"
    return ok, detail


def stop_together(run: ScriptRun, after_step: int) -> tuple[bool, str]:
    """Every rank stopped after the same optimizer step, N or N+1 (the first SIGTERM came after
    step N)."""
    done = steps_begun(run)
    seen = ", ".join(f"rank {r}: {n}" for r, n in done.items())
    detail = f"last step begun {seen} (SIGTERM after step {after_step}: all stop after step "
    detail += f"{after_step} or {after_step + 1})"
    if len(set(done.values())) > 1:
        return False, (
            f"{detail}{CAUSE}each rank stops on its own flag, and SIGTERM reaches the ranks at "
            "different points of a step: no agreement (all_reduce MAX of the flag after each "
            "step) before stopping"
        )
    count = next(iter(done.values()), 0)
    if count > after_step + 1:
        return False, (
            f"{detail}{CAUSE}SIGTERM ignored or acted on late (the flag is not checked after "
            "every step, or the handler does nothing)"
        )
    if count < after_step:
        return False, f"{detail}{CAUSE}the run failed before the signal"
    return True, detail


def resumed_from(term: ScriptRun, requeue: ScriptRun, rank: int) -> int | None:
    """The step of `term` whose parameters the relaunch's first step started from (0: the
    initial model), None when none matches."""
    start = first_pre(requeue, rank)
    if start is None:
        return None
    states = digests(term, rank)
    for step in range(len(states), 0, -1):
        if states[step - 1] == start:
            return step
    records = step_records(term.observe_dir, rank)
    initial = records[0]["pre"].get("digest") if records and records[0].get("pre") else None
    return 0 if start == initial else None


def resumes_where_stopped(term: ScriptRun, requeue: ScriptRun, total: int) -> tuple[bool, str]:
    """The relaunch starts from the parameters the preempted run stopped with, and makes the
    steps left (total - the steps done) on every rank."""
    problems: list[str] = []
    causes: list[str] = []
    for rank in requeue.ranks():
        stopped = len(step_records(term.observe_dir, rank))
        made = len(step_records(requeue.observe_dir, rank))
        start = resumed_from(term, requeue, rank)
        where = "no step of the preempted run" if start is None else f"after step {start}"
        if stopped >= total:
            problems.append(f"rank {rank}: the preempted run trained on to step {stopped}")
            causes.append("SIGTERM ignored: nothing was left to resume")
        elif start != stopped or made != total - stopped:
            problems.append(
                f"rank {rank}: stopped after step {stopped}; the relaunch started from the state "
                f"{where} and made {made} steps (expected {total - stopped})"
            )
            if start is not None and start < stopped:
                causes.append(
                    "the state at the stop was not saved (or not found): the relaunch "
                    "resumed from an older checkpoint and redid steps"
                )
            elif start == stopped and made > total - stopped:
                causes.append("the saved step is behind the saved model: a step is replayed")
            elif start == stopped:
                causes.append(
                    "the saved step is ahead of the saved model (step + 1): a step is skipped"
                )
            else:
                causes.append("the checkpoint is not the model of the stop step")
    ok = not problems and requeue.status == "ok"
    detail = "; ".join(problems) or f"every rank resumed after step {stopped}"
    if requeue.status != "ok":
        detail = f"relaunch: {requeue.summary()}; {detail}"
    if causes:
        detail += CAUSE + "; ".join(dict.fromkeys(causes))
    return ok, detail


def reads_by_step(run: ScriptRun, rank: int, offset: int = 0) -> dict[int, list[int]]:
    """Global step (1-based: the step a read fed) -> the sample ids `rank` read for it."""
    found: dict[int, list[int]] = {}
    for done, sample in fetches(run.observe_dir, rank):
        found.setdefault(offset + done + 1, []).append(sample)
    return found


def bit_for_bit(
    straight: ScriptRun, term: ScriptRun, requeue: ScriptRun, total: int
) -> tuple[bool, str]:
    """After the relaunch, every rank's parameters equal the uninterrupted run's, bit for bit;
    when they do not: the first step whose samples or parameters differ."""
    if straight.status != "ok" or any(n != total for n in steps_done(straight).values()):
        return False, f"uninterrupted run: {straight.summary()}, steps {steps_done(straight)}"
    if requeue.status != "ok":
        return False, f"relaunch: {requeue.summary()}"
    if not any(steps_done(requeue).values()):
        return False, (
            f"the relaunch made no step: the preempted run had trained on to step "
            f"{max(steps_done(term).values(), default=0)}{CAUSE}SIGTERM ignored"
        )
    problems: list[str] = []
    causes: list[str] = []
    for rank in requeue.ranks():
        after = digests(requeue, rank)
        want = digests(straight, rank)
        if after and after[-1] == want[-1]:
            continue
        start = resumed_from(term, requeue, rank)
        offset = total - len(after) if start is None else start
        mine = reads_by_step(requeue, rank, offset)
        theirs = reads_by_step(straight, rank)
        differ = [s for s in sorted(mine) if s <= total and mine[s] != theirs.get(s)]
        text = f"rank {rank}: final parameters differ from the uninterrupted run's"
        if start is not None and len(after) != total - start:
            text += f"; {len(after)} steps after step {start} (to step {total}: {total - start})"
            causes.append(
                "the saved step does not match the saved model: a step is skipped or replayed"
            )
        elif differ:
            s = differ[0]
            text += f"; step {s} read samples {mine[s]} (uninterrupted: {theirs.get(s)})"
            causes.append(
                "the data position is not restored (the relaunch starts the epoch "
                "over, or at the wrong place in drill_data's order)"
            )
        else:
            text += "; the same samples at every step"
            causes.append(
                "torch's RNG state (the dropout masks) or the optimizer state is not "
                "saved and restored"
            )
        problems.append(text)
    detail = "; ".join(problems) or "every rank's final parameters equal the uninterrupted run's"
    if causes:
        detail += CAUSE + "; ".join(dict.fromkeys(causes))
    return not problems, detail


# Mirrors preempt_files/drill_data.py (a test keeps them equal); the grader must not import torch.
DATASET_SIZE = 44
BATCH_SIZE = 4
ORDER_SEED = 17


def epoch_order(epoch: int) -> list[int]:
    """drill_data.epoch_order: the sample ids of epoch `epoch`, in the order they are read."""
    order = list(range(DATASET_SIZE))
    random.Random(ORDER_SEED + epoch).shuffle(order)
    return order


def given_batch(step: int, rank: int, world: int) -> list[int]:
    """The ids `rank` reads for global step `step` (1-based) in drill_data's order: epoch e's
    global batches cut from epoch_order(e), rank r the r-th BATCH_SIZE of each, the remainder
    dropped."""
    global_batch = BATCH_SIZE * world
    epoch, k = divmod(step - 1, DATASET_SIZE // global_batch)
    start = k * global_batch + rank * BATCH_SIZE
    return epoch_order(epoch)[start : start + BATCH_SIZE]


def in_given_order(run: ScriptRun, total: int) -> tuple[bool, str]:
    """Every rank's reads of steps 1..total are drill_data's: step s's BATCH_SIZE reads (in
    fetch order; the order within a batch is free, reads past the last step are a prefetch)
    are the ids given_batch(s, rank, W)."""
    world = len(run.ranks())
    problems: list[str] = []
    for rank in run.ranks():
        reads = [sample for _, sample in fetches(run.observe_dir, rank)]
        for step in range(1, total + 1):
            got = reads[(step - 1) * BATCH_SIZE : step * BATCH_SIZE]
            want = given_batch(step, rank, world)
            if sorted(got) != sorted(want):
                epoch = (step - 1) // (DATASET_SIZE // (BATCH_SIZE * world))
                problems.append(
                    f"rank {rank}: step {step} read samples {got} (drill_data's order: "
                    f"{want}, epoch_order({epoch})'s)"
                )
                break
    if problems:
        return False, "; ".join(problems) + (
            f"{CAUSE}the reads do not follow drill_data's order: another epoch's order (a wrong "
            "epoch number), an own shuffle, another cut of the global batch into the ranks' "
            "shares, or the remainder not dropped"
        )
    if run.status != "ok":
        return False, f"uninterrupted run: {run.summary()}"
    return True, f"every rank read drill_data's order for steps 1-{total}"


SAVE_KINDS = ("save", "write", "create", "rename")  # records of a file put into the dir


def saved_after(run: ScriptRun) -> list[int]:
    """The steps after which some rank wrote (or renamed) a file into the checkpoint dir."""
    steps = {
        started_at(event)
        for event in save_events(run.observe_dir, run.ranks())
        if event["event"] in SAVE_KINDS
    }
    return sorted(step for step in steps if isinstance(step, int))


def saves_every_c(run: ScriptRun, every: int, total: int) -> tuple[bool, str]:
    """The uninterrupted run wrote a checkpoint into DIR after every `every`-th step."""
    want = list(range(every, total + 1, every))
    saved = saved_after(run)
    missing = [step for step in want if step not in saved]
    seen = f"checkpoint files written after steps {saved or 'none'} (C={every}: {want} wanted)"
    if missing:
        return False, (
            f"{seen}; none after step {', '.join(map(str, missing))}{CAUSE}the periodic save's "
            "condition is not `step % C == 0` on the count of steps done (a save before the "
            "count is updated, `//` for `%`, a save only at SIGTERM)"
        )
    if run.status != "ok":
        return False, f"uninterrupted run: {run.summary()}; {seen}"
    return True, seen


def straight_checks(straight: ScriptRun, every: int, total: int) -> list[Check]:
    """The uninterrupted run against item 1 of the contract: drill_data's order, a checkpoint
    after every C-th step."""
    return [
        check("requeue.drill_data_order", *in_given_order(straight, total)),
        check("requeue.saves_every_c", *saves_every_c(straight, every, total)),
    ]


def per_run(verdicts: dict[str, tuple[bool, str]]) -> tuple[bool, str]:
    """One verdict over several launches: all must pass; the detail names each launch (" | "
    between them, trainer_lab.usercode.verdict.verdict_parts), a failing one first."""
    if len(verdicts) == 1:
        return next(iter(verdicts.values()))
    order = sorted(verdicts, key=lambda name: verdicts[name][0])  # failing first, else as given
    detail = " | ".join(f"{name}: {verdicts[name][1]}" for name in order)
    return all(ok for ok, _ in verdicts.values()), detail


def stop_checks(
    term: ScriptRun, after_step: int, grace_s: float, late: ScriptRun | None = None
) -> list[Check]:
    """Both stop checks over the preempted launch, and over `late` when given: the launch where
    the other rank got SIGTERM first and the late rank steps later (ranks that stop together
    in both agreed; a rule on each rank's own timing fits one of them at most)."""
    runs = [term] if late is None else [term, late]
    exited = per_run({run.launch.name: exits_in_grace(run, grace_s) for run in runs})
    together = per_run({run.launch.name: stop_together(run, after_step) for run in runs})
    steps = {"steps": steps_done(term)}
    if late is not None:
        steps["late_steps"] = steps_done(late)
    return [
        check("stop.exits_0_in_grace", *exited),
        check("stop.stop_together", *together, steps),
    ]


def requeue_checks(
    straight: ScriptRun, term: ScriptRun, requeue: ScriptRun, total: int
) -> list[Check]:
    resumed, resumed_detail = resumes_where_stopped(term, requeue, total)
    same, same_detail = bit_for_bit(straight, term, requeue, total)
    return [
        check("requeue.resumes_where_stopped", resumed, resumed_detail),
        check("requeue.bit_for_bit", same, same_detail),
    ]


def again_checks(term: ScriptRun, requeue: ScriptRun, every: int, grace_s: float) -> list[Check]:
    """A second SIGTERM midway through the save: every rank still exits 0 in the grace period,
    and the relaunch runs from the newest complete checkpoint (the stop's; when the save was cut
    short, the newest periodic one, or the stop's if it was whole)."""
    exited, exit_detail = exits_in_grace(term, grace_s)
    stopped = steps_done(term)
    problems: list[str] = []
    for rank in requeue.ranks():
        start = resumed_from(term, requeue, rank)
        newest = stopped[rank] if exited else (stopped[rank] // every) * every
        if start != newest and not (start == stopped[rank] and not exited):
            where = "no step of the preempted run" if start is None else f"after step {start}"
            problems.append(
                f"rank {rank}: the relaunch started from the state {where} (the newest complete "
                f"checkpoint: step {newest})"
            )
    detail = "; ".join(problems)
    if requeue.status != "ok":
        detail = "; ".join(p for p in (f"relaunch: {requeue.summary()}", detail) if p)
        detail += (
            f"{CAUSE}the checkpoint the second SIGTERM cut short is read as the newest: write it "
            "to a temporary name and rename it when complete (or mark it complete last)"
        )
    elif problems:
        detail += f"{CAUSE}the relaunch does not start from the newest complete checkpoint"
    ok = requeue.status == "ok" and not problems
    detail = detail or f"the relaunch started from the newest complete checkpoint (step {newest})"
    exits = check("again.exits_0_in_grace", exited, exit_detail)
    resumes = check("again.resumes_complete", ok, detail)
    if not cut_short(term):
        # the ranks stopped and saved, and nothing the second SIGTERM could break was tried:
        # both checks did not run; else a verdict stays (the stop saved nothing, or the run
        # failed on its own before)
        exits["detail"] = with_note(exit_detail, NOT_CUT)
        if exited and ok:
            return [not_run("again.exits_0_in_grace"), not_run("again.resumes_complete")]
    return [exits, resumes]


NOT_CUT = (
    "the second SIGTERM never came during a save: no write into the checkpoint dir was seen "
    "after the first SIGTERM on any rank (a save by means the harness does not watch, or none)"
)


def not_run(name: str) -> Check:
    return check(name, False, f"not run: {NOT_CUT}", {"not_run": True})


def with_note(detail: str, note: str) -> str:
    """`detail` with `note` before its likely causes (which are read up to its end)."""
    head, cause, causes = detail.partition(CAUSE)
    return f"{head}; {note}{cause}{causes}"


def cut_short(term: ScriptRun) -> bool:
    """Whether the second SIGTERM came midway through a save on some rank."""
    return any(
        str(r.get("why", "")).startswith(protocol.TERM_DURING_SAVE)
        for rank in term.ranks()
        for r in term_records(term.observe_dir, rank)
    )


def facts(run: ScriptRun) -> dict[str, Any]:
    """What the harness sent each rank (for the result's observations)."""
    return {str(rank): term_records(run.observe_dir, rank) for rank in run.ranks()}

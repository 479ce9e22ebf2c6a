"""The preemption prompt's checks on fabricated evidence (no runs): what the harness records of
a launch (the SIGTERMs it sent, each optimizer step's parameter digests, the samples read, when
each rank's script returned) judged as the contract says: exit 0 within the grace period, stop
together, resume from the state at the stop, continue bit for bit, and after a second SIGTERM
during the save start from the newest complete checkpoint; the uninterrupted run reads
drill_data's order and checkpoints after every C-th step."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from trainer_lab.grading.prompts.checks_preempt import (
    BATCH_SIZE,
    DATASET_SIZE,
    again_checks,
    epoch_order,
    given_batch,
    in_given_order,
    requeue_checks,
    saves_every_c,
    stop_checks,
    straight_checks,
)
from trainer_lab.grading.prompts.preemption import FILES
from trainer_lab.result import FAILURES_DIR
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun

T0 = 1_000.0  # when the first SIGTERM came
B = 4  # samples per rank per step


def ids(step: int, rank: int, shift: int = 0) -> list[int]:
    """The samples `rank` reads for global step `step` (a stand-in for drill_data's order)."""
    first = ((step - 1 + shift) * 2 + rank) * B
    return list(range(first, first + B))


def run(
    tmp_path: Path,
    name: str,
    steps: tuple[int, int],
    *,
    states: str = "d",
    ends: dict[int, float | None] | None = None,
    terms: dict[int, list[str]] | None = None,
    begun: dict[int, int] | None = None,
    raised: tuple[int, ...] = (),
    status: str = "ok",
    shift: int = 0,
) -> ScriptRun:
    """A W=2 launch whose ranks made the global steps steps[0]+1 .. steps[1], from the state
    `{states}{steps[0]}` (digest names: state after step k is f"{states}{k}"); `ends`: rank ->
    seconds after T0 its script returned with 0 (None: never); `terms`: rank -> why each SIGTERM
    was sent; `begun`: rank -> the last step it read samples for; `raised`: ranks that raised."""
    run_dir = tmp_path / name
    observe = run_dir / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    first, last = steps
    for rank in (0, 1):
        records = [
            {
                "pstep": k - first,
                "pre": {"digest": f"{states}{k - 1}"},
                "post": {"digest": f"{states}{k}"},
            }
            for k in range(first + 1, last + 1)
        ]
        (observe / protocol.steps_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in records)
        )
        reads = [
            {"pstep": k - 1 - first, "id": i}
            for k in range(first + 1, (begun or {}).get(rank, last) + 1)
            for i in ids(k, rank, shift)
        ]
        (observe / protocol.fetch_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in reads)
        )
        sent = (terms or {}).get(rank, [])
        lines = [
            {"pstep": last - first, "time": T0 + 0.1 * n, "why": why} for n, why in enumerate(sent)
        ]
        (observe / protocol.term_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in lines)
        )
        end = (ends or {}).get(rank, 0.2)
        if end is not None:
            record = {"rank": rank, "code": 0, "time": T0 + end, "group_alive": False}
            (observe / protocol.end_file(rank)).write_text(json.dumps(record))
        if rank in raised:
            (run_dir / FAILURES_DIR).mkdir(exist_ok=True)
            failure = {
                "rank": rank, "type": "RuntimeError", "message": "Connection reset by peer",
                "where": "train.py:82", "time": T0 + 1, "traceback": "",
            }  # fmt: skip
            (run_dir / FAILURES_DIR / f"rank{rank}.json").write_text(json.dumps(failure))
    launch = ScriptLaunch(name, Path("train.py"), (), 2, run_dir, tmp_path / "ckpt", 60.0)
    return ScriptRun(launch, status, 0 if status == "ok" else 1, 1.0)  # type: ignore[arg-type]


SIGNALLED = {0: ["after step 6"], 1: ["dist.all_reduce after step 6"]}


def verdicts(checks) -> dict[str, bool]:
    return {c["name"]: c["passed"] for c in checks}


def detail(checks, name: str) -> str:
    return next(c["detail"] for c in checks if c["name"] == name)


def test_ranks_that_stop_together_and_exit_0_in_the_grace_period_pass(tmp_path):
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED)
    checks = stop_checks(term, 6, 5.0)
    assert verdicts(checks) == {"stop.exits_0_in_grace": True, "stop.stop_together": True}


def test_a_rank_that_never_returns_after_its_sigterm_fails_as_having_no_handler(tmp_path):
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED, ends={1: None}, status="error")
    checks = stop_checks(term, 6, 5.0)
    assert not verdicts(checks)["stop.exits_0_in_grace"]
    assert "no SIGTERM handler on that rank" in detail(checks, "stop.exits_0_in_grace")


def test_a_rank_that_returns_past_the_grace_period_fails_naming_it(tmp_path):
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED, ends={0: 7.3})
    checks = stop_checks(term, 6, 5.0)
    assert not verdicts(checks)["stop.exits_0_in_grace"]
    assert "returned 7.3 s after it (grace 5 s)" in detail(checks, "stop.exits_0_in_grace")


def test_a_rank_that_goes_on_into_the_next_step_alone_fails_both_stop_checks(tmp_path):
    # rank 1 stopped after step 6; rank 0 read step 7's samples and failed in its collective
    term = run(
        tmp_path, "term", (0, 6), terms=SIGNALLED, begun={0: 7}, ends={0: None}, raised=(0,),
        status="error",
    )  # fmt: skip
    checks = stop_checks(term, 6, 5.0)
    assert verdicts(checks) == {"stop.exits_0_in_grace": False, "stop.stop_together": False}
    assert "last step begun rank 0: 7, rank 1: 6" in detail(checks, "stop.stop_together")
    assert "no agreement" in detail(checks, "stop.stop_together")
    assert "raised RuntimeError" in detail(checks, "stop.exits_0_in_grace")


def test_ranks_that_train_on_past_the_signal_fail_as_ignoring_it(tmp_path):
    term = run(tmp_path, "term", (0, 12), terms=SIGNALLED)
    checks = stop_checks(term, 6, 5.0)
    assert verdicts(checks)["stop.stop_together"] is False
    assert "SIGTERM ignored" in detail(checks, "stop.stop_together")


def test_a_requeue_from_the_state_at_the_stop_that_ends_equal_passes(tmp_path):
    straight = run(tmp_path, "straight", (0, 12))
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED)
    requeue = run(tmp_path, "requeue", (6, 12))
    checks = requeue_checks(straight, term, requeue, 12)
    assert verdicts(checks) == {"requeue.resumes_where_stopped": True, "requeue.bit_for_bit": True}


def test_a_requeue_from_an_older_checkpoint_fails_resumes_where_stopped(tmp_path):
    straight = run(tmp_path, "straight", (0, 12))
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED)
    requeue = run(tmp_path, "requeue", (4, 12))
    checks = requeue_checks(straight, term, requeue, 12)
    assert verdicts(checks) == {"requeue.resumes_where_stopped": False, "requeue.bit_for_bit": True}
    assert "from the state after step 4 and made 8 steps (expected 6)" in detail(
        checks, "requeue.resumes_where_stopped"
    )


def test_a_requeue_that_skips_a_step_fails_both_requeue_checks(tmp_path):
    straight = run(tmp_path, "straight", (0, 12))
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED)
    requeue = run(tmp_path, "requeue", (6, 11), states="e")
    requeue_pre = requeue.observe_dir / protocol.steps_file(0)
    for rank in (0, 1):  # it starts from the stop's state, then another run's states
        path = requeue.observe_dir / protocol.steps_file(rank)
        path.write_text(
            path.read_text().replace('"pre": {"digest": "e6"}', '"pre": {"digest": "d6"}', 1)
        )
    assert requeue_pre.exists()
    checks = requeue_checks(straight, term, requeue, 12)
    assert verdicts(checks) == {
        "requeue.resumes_where_stopped": False,
        "requeue.bit_for_bit": False,
    }
    assert "step + 1" in detail(checks, "requeue.resumes_where_stopped")
    assert "5 steps after step 6 (to step 12: 6)" in detail(checks, "requeue.bit_for_bit")


def test_other_samples_after_the_requeue_name_the_data_position(tmp_path):
    straight = run(tmp_path, "straight", (0, 12))
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED)
    requeue = run(tmp_path, "requeue", (6, 12), states="d", shift=-6)  # the epoch over
    for rank in (0, 1):  # its last state differs from the uninterrupted run's
        path = requeue.observe_dir / protocol.steps_file(rank)
        path.write_text(
            path.read_text().replace('"post": {"digest": "d12"}', '"post": {"digest": "x"}')
        )
    checks = requeue_checks(straight, term, requeue, 12)
    text = detail(checks, "requeue.bit_for_bit")
    assert not verdicts(checks)["requeue.bit_for_bit"]
    assert f"step 7 read samples {ids(1, 0)} (uninterrupted: {ids(7, 0)})" in text
    assert "data position is not restored" in text


def test_the_same_samples_and_other_parameters_name_the_rng_or_optimizer_state(tmp_path):
    straight = run(tmp_path, "straight", (0, 12))
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED)
    requeue = run(tmp_path, "requeue", (6, 12))
    for rank in (0, 1):
        path = requeue.observe_dir / protocol.steps_file(rank)
        path.write_text(
            path.read_text().replace('"post": {"digest": "d12"}', '"post": {"digest": "x"}')
        )
    checks = requeue_checks(straight, term, requeue, 12)
    assert not verdicts(checks)["requeue.bit_for_bit"]
    assert "RNG state" in detail(checks, "requeue.bit_for_bit")


AGAIN = {0: ["after step 6", "during the save of step-000006.pt.tmp"], 1: ["after step 6"]}


def test_after_a_second_sigterm_the_relaunch_must_start_from_the_newest_complete_checkpoint(
    tmp_path,
):
    term = run(tmp_path, "term-again", (0, 6), terms=AGAIN)
    at_stop = run(tmp_path, "requeue-a", (6, 12))
    older = run(tmp_path, "requeue-b", (4, 12))
    assert verdicts(again_checks(term, at_stop, 4, 5.0)) == {
        "again.exits_0_in_grace": True,
        "again.resumes_complete": True,
    }
    # the stop's save completed (every rank exit 0): step 4 is not the newest
    assert not verdicts(again_checks(term, older, 4, 5.0))["again.resumes_complete"]


def test_a_save_cut_short_by_the_second_sigterm_leaves_the_periodic_checkpoint_newest(tmp_path):
    term = run(tmp_path, "term-again", (0, 6), terms=AGAIN, ends={0: None}, status="error")
    older = run(tmp_path, "requeue-again", (4, 12))
    checks = again_checks(term, older, 4, 5.0)
    assert verdicts(checks) == {"again.exits_0_in_grace": False, "again.resumes_complete": True}
    assert "killed the rank in the middle of its save" in detail(checks, "again.exits_0_in_grace")


def test_a_relaunch_that_fails_on_a_torn_checkpoint_fails_resumes_complete(tmp_path):
    term = run(tmp_path, "term-again", (0, 6), terms=AGAIN, ends={0: None}, status="error")
    torn = run(tmp_path, "requeue-again", (6, 6), status="error")
    checks = again_checks(term, torn, 4, 5.0)
    assert not verdicts(checks)["again.resumes_complete"]
    assert "cut short is read as the newest" in detail(checks, "again.resumes_complete")


def test_ranks_that_stop_together_only_when_the_signals_come_a_step_apart_fail_the_late_run(
    tmp_path,
):
    # each rank on its own timing: both stop after 7 when rank 1's signal follows at once; when
    # rank 0 gets it first and rank 1 only after step 8, rank 1 goes on and waits for rank 0
    term = run(
        tmp_path, "term", (0, 7), terms={0: ["dataset read after step 6"], 1: ["after step 6"]}
    )
    late = run(
        tmp_path, "term-late", (0, 7), terms={0: ["after step 6"]}, begun={1: 8},
        ends={0: None, 1: None}, status="timeout",
    )  # fmt: skip
    alone = stop_checks(term, 6, 5.0)
    assert verdicts(alone) == {"stop.exits_0_in_grace": True, "stop.stop_together": True}
    checks = stop_checks(term, 6, 5.0, late)
    assert verdicts(checks) == {"stop.exits_0_in_grace": False, "stop.stop_together": False}
    together = detail(checks, "stop.stop_together")
    assert together.startswith("term-late: last step begun rank 0: 7, rank 1: 8")
    assert (
        "no agreement" in together and " | term: last step begun rank 0: 7, rank 1: 7" in together
    )
    exits = detail(checks, "stop.exits_0_in_grace")
    assert "rank 1: no SIGTERM (stopped before its signal came)" in exits
    assert "never returned (stopped by the harness)" in exits
    assert "waits in a collective another rank never joins" in exits
    assert "no SIGTERM handler" not in exits
    facts = next(c["facts"] for c in checks if c["name"] == "stop.stop_together")
    assert facts == {"steps": {0: 7, 1: 7}, "late_steps": {0: 7, 1: 7}}


def test_agreeing_ranks_pass_the_late_run_where_the_late_rank_ends_before_its_signal(tmp_path):
    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED)
    late = run(tmp_path, "term-late", (0, 6), terms={1: ["after step 6"]})
    checks = stop_checks(term, 6, 5.0, late)
    assert verdicts(checks) == {"stop.exits_0_in_grace": True, "stop.stop_together": True}
    assert "rank 0: no SIGTERM (it ended first)" in detail(checks, "stop.exits_0_in_grace")


def test_without_a_second_sigterm_mid_save_the_again_checks_did_not_run(tmp_path):
    # the stop's checkpoint was written (the relaunch starts from it), by nothing the harness saw
    term = run(tmp_path, "term-again", (0, 6), terms=SIGNALLED)
    requeue = run(tmp_path, "requeue-again", (6, 12))
    checks = again_checks(term, requeue, 4, 5.0)
    assert verdicts(checks) == {"again.exits_0_in_grace": False, "again.resumes_complete": False}
    for c in checks:
        assert c["facts"] == {"not_run": True}
        assert c["detail"].startswith("not run: the second SIGTERM never came during a save")


def test_a_stop_that_saved_nothing_keeps_its_failure_without_a_second_sigterm(tmp_path):
    term = run(tmp_path, "term-again", (0, 6), terms=SIGNALLED)
    older = run(tmp_path, "requeue-again", (4, 12))
    checks = again_checks(term, older, 4, 5.0)
    assert verdicts(checks) == {"again.exits_0_in_grace": True, "again.resumes_complete": False}
    assert "the second SIGTERM never came" in detail(checks, "again.exits_0_in_grace")
    assert "not start from the newest complete checkpoint" in detail(
        checks, "again.resumes_complete"
    )


def test_a_run_that_failed_before_any_save_keeps_its_verdicts_without_a_second_sigterm(tmp_path):
    # rank 1 died of its SIGTERM (no handler) before the stop's save: the periodic checkpoint
    # is the newest, and the relaunch from it is right
    term = run(tmp_path, "term-again", (0, 6), terms=SIGNALLED, ends={1: None}, status="error")
    older = run(tmp_path, "requeue-again", (4, 12))
    checks = again_checks(term, older, 4, 5.0)
    assert verdicts(checks) == {"again.exits_0_in_grace": False, "again.resumes_complete": True}
    assert "no SIGTERM handler" in detail(checks, "again.exits_0_in_grace")


def read_as(run_: ScriptRun, batch_of) -> ScriptRun:
    """`run_` with its ranks' reads replaced: step k (1-based) reads batch_of(k, rank)."""
    observe = run_.observe_dir
    for rank in (0, 1):
        reads = [{"pstep": k - 1, "id": i} for k in range(1, 13) for i in batch_of(k, rank)]
        (observe / protocol.fetch_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in reads)
        )
    return run_


def wrote(run_: ScriptRun, after: dict[int, list[int]], event: str = "save") -> ScriptRun:
    """`run_` with save records: rank -> the steps after which it wrote a checkpoint file."""
    for rank, steps in after.items():
        lines = [
            {"event": event, "path": f"ckpt/step-{k}.pt", "pstep": k, "origin": k} for k in steps
        ]
        (run_.observe_dir / protocol.saves_file(rank)).write_text(
            "".join(json.dumps(r) + "\n" for r in lines)
        )
    return run_


def shifted_epochs(step: int, rank: int) -> list[int]:
    """given_batch with the epoch counted down (epoch - 1 for a new epoch): mutant #72."""
    epoch, k = divmod(step - 1, 5)  # 5 steps an epoch at W=2
    start = k * 8 + rank * 4
    return epoch_order(-epoch)[start : start + 4]


def test_the_uninterrupted_run_reads_drill_datas_order_or_fails_naming_the_step(tmp_path):
    given = read_as(run(tmp_path, "given", (0, 12)), lambda k, r: given_batch(k, r, 2)[::-1])
    ok, text = in_given_order(given, 12)
    assert ok, text  # the order within a rank's batch is free
    wrong = read_as(run(tmp_path, "minus", (0, 12)), shifted_epochs)
    ok, text = in_given_order(wrong, 12)
    assert not ok
    assert text.startswith("rank 0: step 6 read samples") and "epoch_order(1)'s" in text
    swapped = read_as(run(tmp_path, "swapped", (0, 12)), lambda k, r: given_batch(k, 1 - r, 2))
    ok, text = in_given_order(swapped, 12)
    assert not ok and "rank 0: step 1" in text and "rank 1: step 1" in text


def test_the_given_order_is_cut_per_epoch_with_the_remainder_dropped():
    # 44 samples, 8 a step at W=2: 5 steps an epoch, ids 40..43 of each epoch's order dropped
    assert given_batch(1, 1, 2) == epoch_order(0)[4:8]
    assert given_batch(5, 1, 2) == epoch_order(0)[36:40]
    assert given_batch(6, 0, 2) == epoch_order(1)[0:4]
    assert epoch_order(1) != epoch_order(0) and sorted(epoch_order(2)) == list(range(44))


def test_the_graders_copy_of_the_order_is_drill_datas():
    path = FILES / "drill_data.py"
    spec = importlib.util.spec_from_file_location("preempt_drill_data", path)
    drill_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drill_data)
    assert (drill_data.DATASET_SIZE, drill_data.BATCH_SIZE) == (DATASET_SIZE, BATCH_SIZE)
    assert all(drill_data.epoch_order(e) == epoch_order(e) for e in (-1, 0, 1, 2, 3))


def test_a_checkpoint_after_every_c_th_step_passes_and_a_missing_one_is_named(tmp_path):
    every = wrote(run(tmp_path, "every", (0, 12)), {0: [4, 8, 12]})
    assert saves_every_c(every, 4, 12) == (
        True,
        "checkpoint files written after steps [4, 8, 12] (C=4: [4, 8, 12] wanted)",
    )
    renamed = wrote(run(tmp_path, "renamed", (0, 12)), {0: [4, 12], 1: [8]}, "rename")
    assert saves_every_c(renamed, 4, 12)[0]
    early = wrote(run(tmp_path, "early", (0, 12)), {0: [1, 2, 3, 12]})  # step // C == 0
    ok, text = saves_every_c(early, 4, 12)
    assert not ok and "after steps [1, 2, 3, 12]" in text and "none after step 4, 8" in text
    assert "`//` for `%`" in text
    ok, text = saves_every_c(run(tmp_path, "never", (0, 12)), 4, 12)
    assert not ok and "after steps none" in text and "none after step 4, 8, 12" in text


def test_the_straight_checks_fail_a_failed_run_even_in_order(tmp_path):
    failed_run = read_as(run(tmp_path, "failed", (0, 12), status="failed"), given_batch_w2)
    wrote(failed_run, {0: [4, 8, 12]})
    checks = straight_checks(failed_run, 4, 12)
    assert verdicts(checks) == {
        "requeue.drill_data_order": False,
        "requeue.saves_every_c": False,
    }
    assert detail(checks, "requeue.drill_data_order").startswith("uninterrupted run: ")


def given_batch_w2(step: int, rank: int) -> list[int]:
    return given_batch(step, rank, 2)


def test_a_rank_taken_by_gloos_shutdown_race_after_its_work_exits_in_time(tmp_path):
    """The harness reads a rank ended by the teardown guard after destroy_process_group as
    gloo's shutdown race (a note; the run is ok): its script never recorded a return, but its
    work was done when it destroyed its group, TEARDOWN_S before the guard's dump."""
    import os

    from trainer_lab.usercode.protocol import TEARDOWN_S

    term = run(tmp_path, "term", (0, 6), terms=SIGNALLED, ends={1: None}, status="ok")
    dump = term.observe_dir / protocol.teardown_file(1, 4242)
    dump.write_text('Thread 0x7f (most recent call first):\n  File "train.py", line 90\n')
    os.utime(dump, (T0 + 0.7 + TEARDOWN_S, T0 + 0.7 + TEARDOWN_S))
    checks = stop_checks(term, 6, 5.0)
    assert verdicts(checks)["stop.exits_0_in_grace"], detail(checks, "stop.exits_0_in_grace")
    assert "ended by gloo's shutdown race after its work 0.7 s after it" in detail(
        checks, "stop.exits_0_in_grace"
    )
    os.utime(dump, (T0 + 6.1 + TEARDOWN_S, T0 + 6.1 + TEARDOWN_S))  # destroyed its group late
    assert "returned 6.1 s after it" in detail(stop_checks(term, 6, 5.0), "stop.exits_0_in_grace")
    dump.write_text("")  # armed, never fired: the rank was killed some other way
    assert "never returned (killed)" in detail(stop_checks(term, 6, 5.0), "stop.exits_0_in_grace")

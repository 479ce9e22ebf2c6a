"""replica-recovery: a SIGKILLed replica leaves the quorum, the survivors keep training from
memory (same processes, nothing redone), the gradient is averaged over the live replicas, and a
replacement recovers weights and momentum from a peer; restarting every replica from disk instead
redoes the steps since the last checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, processes_mentioning, undeclared
from trainer_lab.api import run_lab
from trainer_lab.labs.replica_recovery.quorum import Ask, Round, form, missing, ready

pytestmark = pytest.mark.lab

PARAMS_COUNT = 8 * 16 + 16 + 16 + 1  # Linear(8, 16), Linear(16, 1)


@pytest.mark.parametrize("world_size", [2, 3])
def test_survivors_continue_and_a_replacement_recovers_from_a_peer(
    tmp_path: Path, world_size: int
) -> None:
    result = run_lab("replica-recovery", {}, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    assert processes_mentioning(tmp_path) == []
    live, restart = result["observations"]["live"], result["observations"]["restart"]
    w = world_size
    # default: steps 12, the victim dies in step 7, the spare joins at step 9, saves every 4
    assert live["quorum"]["sizes"] == [w, w - 1, w]
    assert live["failed_step"] == 7 and live["retried_allreduces"] == w - 1
    assert live["error_message"]
    assert live["survivor_pid_changes"] == 0 and live["steps_redone"] == 0
    assert live["final_step"] == 12
    assert live["global_batch"] == {"before": 8 * w, "shrunk": 8 * (w - 1), "after": 8 * w}
    assert live["divisor"] == {"before": w, "shrunk": w - 1, "after": w}
    # weights + momentum as float32, and the step as int64
    assert live["recovery"] == {
        "step": 9,
        "src": 0,
        "bytes": PARAMS_COUNT * 2 * 4 + 8,
        "same_digests": True,
    }
    assert live["replacement"] == {"params_max_abs_diff": 0.0, "momentum_max_abs_diff": 0.0}
    assert live["lockstep"] == {"max_abs_diff": 0.0, "digest_mismatch_steps": 0}
    reference = live["reference"]
    if w == 2:  # two gradients add the same way in gloo and in the replay
        assert reference == {"max_abs_diff_to_join": 0.0, "max_abs_diff_after_join": 0.0}
    else:  # three add in ring order: last-bit differences
        assert reference["max_abs_diff_to_join"] <= 1e-6
    assert restart["survivor_pid_changes"] == w - 1 and restart["restarted_processes"] == w
    assert restart["resumed_from_step"] == 4 and restart["steps_redone"] == 2
    assert restart["final_step"] == 12 and restart["failed_step"] == 7


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("old_divisor", {"gradient_average_over_live_replicas"}),
        ("fresh_init", {"replacement_matches_peer", "replicas_in_lockstep_after_join"}),
        ("weights_only", {"replacement_matches_peer", "replicas_in_lockstep_after_join"}),
        ("fatal_errors", {"survivors_kept_training"}),
    ],
)
def test_each_sabotage_fails_its_checks(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    params = {"steps": 8, "kill_after_step": 3, "shrunk_steps": 2, "checkpoint_every": 2}
    result = run_lab(
        "replica-recovery", {**params, "sabotage": sabotage}, 2, tmp_path, timeout_s=120
    )
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing
    assert processes_mentioning(tmp_path) == []
    live = result["observations"]["live"]
    if sabotage == "weights_only":  # the weights arrived, the momentum did not
        assert live["replacement"]["params_max_abs_diff"] == 0
        assert live["replacement"]["momentum_max_abs_diff"] > 0
    if sabotage == "fatal_errors":  # the survivor restarted from the step-2 save: redid step 3
        assert live["survivor_pid_changes"] == 1 and live["steps_redone"] == 1


def ask(rid: int, pid: int, step: int, seq: int = 1) -> Ask:
    return Ask(rid=rid, pid=pid, seq=seq, step=step)


def test_a_round_waits_for_every_live_member_and_drops_dead_ones() -> None:
    previous = ((0, 100), (1, 101), (2, 102))
    pending = {0: ask(0, 100, 6), 2: ask(2, 102, 6)}
    alive = {(0, 100), (1, 101), (2, 102)}
    assert ready(previous, pending, alive, 1, set()) is None  # replica 1 is alive: wait
    alive.discard((1, 101))  # its heartbeat went stale
    asks = ready(previous, pending, alive, 1, set())
    assert asks is not None and [a.rid for a in asks] == [0, 2]
    quorum = form(asks, previous, epoch=0)
    assert quorum.epoch == 1 and quorum.members == ((0, 100), (2, 102))
    assert quorum.rank_of(2) == 1 and quorum.lagging == () and missing(quorum.members, 3) == [1]
    # the same members again keep the quorum id (no new group)
    assert form(asks, quorum.members, epoch=1).epoch == 1


def test_a_spare_is_waited_for_and_recovers_from_the_lowest_up_to_date_peer() -> None:
    previous = ((0, 100), (2, 102))
    alive = {(0, 100), (2, 102), (1, 201)}
    pending = {0: ask(0, 100, 9), 2: ask(2, 102, 9)}
    assert ready(previous, pending, alive, 1, expected={1}) is None
    pending[1] = ask(1, 201, -1)
    asks = ready(previous, pending, alive, 1, expected={1})
    assert asks is not None
    quorum = form(asks, previous, epoch=1)
    assert quorum.epoch == 2 and quorum.max_step == 9 and quorum.src == 0
    assert quorum.lagging == (1,)
    assert Round.from_dict(quorum.to_dict()) == quorum


def test_a_new_process_in_a_slot_replaces_the_old_member_and_min_replicas_holds() -> None:
    previous = ((0, 100), (1, 101))
    alive = {(0, 300), (1, 301)}  # both slots restarted: the old processes are gone
    pending = {0: ask(0, 300, 4)}
    assert ready(previous, pending, alive, 2, set()) is None  # a whole-job restart waits for 2
    pending[1] = ask(1, 301, 4)
    asks = ready(previous, pending, alive, 2, set())
    assert asks is not None and form(asks, previous, 0).members == ((0, 300), (1, 301))
    # an ask from a process that is not the one heartbeating is ignored
    assert ready((), {0: ask(0, 999, 0)}, {(0, 100)}, 1, set()) is None


def test_short_error_keeps_the_reason() -> None:
    from trainer_lab.labs.replica_recovery.drive import short_error

    gloo = "[/x/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:1. More"
    assert short_error(gloo) == "Connection closed by peer"
    assert short_error("Timed out waiting 5000ms for recv") == "Timed out waiting 5000ms for recv"

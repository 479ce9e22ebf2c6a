from __future__ import annotations

from drill.mock.clock import (
    ClockState,
    PhaseAdvanced,
    PhaseAlarm,
    RoundClock,
    RoundFinished,
    Status,
)


def make(clock, budgets=(60.0, 120.0, 60.0), auto=True, state=None) -> RoundClock:
    return RoundClock(list(budgets), auto_advance=auto, now=clock, state=state)


def test_counts_down_the_current_phase_and_the_total(clock):
    rc = make(clock)
    rc.start()
    clock.advance(20)
    assert rc.tick() == []
    assert rc.phase == 0
    assert rc.phase_remaining_s() == 40
    assert rc.total_remaining_s() == 220


def test_nothing_is_charged_before_start(clock):
    rc = make(clock)
    clock.advance(500)
    assert rc.tick() == []
    assert rc.total_used_s() == 0
    assert rc.status is Status.PAUSED


def test_auto_advance_rings_the_alarm_and_carries_the_surplus(clock):
    rc = make(clock)
    rc.start()
    clock.advance(70)
    assert rc.tick() == [PhaseAlarm(0), PhaseAdvanced(0, 1, "auto")]
    assert rc.state.used_s == [60, 10, 0]
    assert rc.phase_remaining_s() == 110
    # the alarm rings once per phase
    clock.advance(5)
    assert rc.tick() == []


def test_a_late_tick_crosses_several_phases_charging_each_its_budget(clock):
    rc = make(clock)
    rc.start()
    clock.advance(200)
    events = rc.tick()
    assert events == [
        PhaseAlarm(0),
        PhaseAdvanced(0, 1, "auto"),
        PhaseAlarm(1),
        PhaseAdvanced(1, 2, "auto"),
    ]
    assert rc.state.used_s == [60, 120, 20]


def test_without_auto_advance_the_phase_overruns_until_a_key(clock):
    rc = make(clock, auto=False)
    rc.start()
    clock.advance(90)
    assert rc.tick() == [PhaseAlarm(0)]
    assert rc.phase == 0
    assert rc.phase_remaining_s() == -30
    assert rc.overrun()
    assert rc.advance() == [PhaseAdvanced(0, 1, "key")]
    assert not rc.overrun()
    assert rc.state.used_s == [90, 0, 0]


def test_advance_by_key_before_the_budget_is_spent(clock):
    rc = make(clock)
    rc.start()
    clock.advance(15)
    assert rc.advance() == [PhaseAdvanced(0, 1, "key")]
    clock.advance(30)
    rc.tick()
    assert rc.state.used_s == [15, 30, 0]
    assert rc.state.alarmed == []


def test_hard_stop_at_the_total_budget(clock):
    rc = make(clock)
    rc.start()
    clock.advance(10_000)
    events = rc.tick()
    assert events[-2:] == [PhaseAlarm(2), RoundFinished("time")]
    assert rc.status is Status.FINISHED
    assert rc.total_used_s() == 240
    assert rc.total_remaining_s() == 0
    # once finished nothing moves
    clock.advance(100)
    assert rc.tick() == []
    assert rc.advance() == []
    assert rc.start() == []
    assert rc.status is Status.FINISHED


def test_hard_stop_when_overruns_ate_the_last_phase(clock):
    rc = make(clock, auto=False)
    rc.start()
    clock.advance(230)  # phase 0 overruns by 170 s
    assert rc.tick() == [PhaseAlarm(0)]
    rc.advance()
    rc.advance()
    clock.advance(15)
    assert rc.tick() == [RoundFinished("time")]
    assert rc.state.used_s == [230, 0, 10]


def test_pause_stops_the_clock_and_resume_restarts_it(clock):
    rc = make(clock)
    rc.start()
    clock.advance(10)
    rc.pause()
    assert rc.status is Status.PAUSED
    clock.advance(300)
    assert rc.tick() == []
    assert rc.total_used_s() == 10
    rc.resume()
    clock.advance(5)
    rc.tick()
    assert rc.total_used_s() == 15
    assert rc.toggle_pause() == [] and rc.status is Status.PAUSED
    assert rc.toggle_pause() == [] and rc.status is Status.RUNNING


def test_advance_past_the_last_phase_completes_the_round(clock):
    rc = make(clock, budgets=(30.0, 30.0))
    rc.start()
    rc.advance()
    assert rc.advance() == [RoundFinished("completed")]
    assert rc.state.finish_reason == "completed"


def test_finish_early(clock):
    rc = make(clock)
    rc.start()
    clock.advance(3)
    assert rc.finish() == [RoundFinished("ended")]
    assert rc.total_used_s() == 3


def test_state_round_trips_and_a_restored_round_starts_paused(clock):
    rc = make(clock)
    rc.start()
    clock.advance(75)
    rc.tick()
    saved = rc.state.to_dict()
    assert saved["status"] == "running"
    clock.advance(1000)  # the process died; this time must not be charged
    restored = make(clock, state=ClockState.from_dict(saved))
    assert restored.status is Status.PAUSED
    assert restored.phase == 1
    restored.tick()
    assert restored.state.used_s == [60, 15, 0]
    restored.resume()
    clock.advance(5)
    restored.tick()
    assert restored.state.used_s == [60, 20, 0]
    assert restored.state.alarmed == [0]


def test_after_a_key_advance_the_total_agrees_with_the_phase_clocks(clock):
    rc = make(clock)  # 60 + 120 + 60
    rc.start()
    clock.advance(15)
    rc.advance()  # 45 s of phase 0 left unused: not banked
    clock.advance(20)
    rc.tick()
    assert rc.phase_remaining_s() == 100
    assert rc.total_remaining_s() == 100 + 60
    rc.advance()
    assert rc.total_remaining_s() == rc.phase_remaining_s() == 60
    clock.advance(61)  # the last phase's time is up: the round ends with it
    assert rc.tick() == [PhaseAlarm(2), RoundFinished("time")]
    assert rc.state.used_s == [15, 20, 60]
    assert rc.total_remaining_s() == 0

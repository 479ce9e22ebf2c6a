"""node-loss's replacement verdict, read from workers' events (no processes): the fresh node 1
and the survivor must both start at world size 2, hold both ranks, resume from the last
checkpoint saved before the join, and both agents must finish."""

from __future__ import annotations

from typing import Any

from trainer_lab.labs.node_loss.drive import _report_replacement


class _Recorder:
    def __init__(self) -> None:
        self.observations: dict[str, Any] = {}
        self.checks: dict[str, bool] = {}

    def observe(self, name: str, value: Any) -> None:
        self.observations[name] = value

    def check(self, name: str, passed: bool, detail: str) -> bool:
        self.checks[name] = passed
        return passed


def _start(node: int, rank: int, world: int, step: int, time: float, pid: int) -> dict[str, Any]:
    return {"event": "start", "node": node, "rank": rank, "world_size": world, "step": step,
            "time": time, "pid": pid}  # fmt: skip


def _events(fresh_step: int) -> list[dict[str, Any]]:
    return [
        _start(0, 0, 1, 4, 10.0, 100),  # the survivor alone after the kill
        {"event": "saved", "step": 12, "time": 14.0, "node": 0},
        _start(0, 0, 2, 12, 21.0, 101),  # restarted for the join
        _start(1, 1, 2, fresh_step, 21.5, 200),  # the fresh node 1
        {"event": "step", "step": fresh_step + 1, "time": 22.0, "pid": 200, "node": 1},
    ]


def _verdict(events: list[dict[str, Any]], codes: dict[int, int | None]) -> _Recorder:
    recorder = _Recorder()
    run: Any = recorder
    _report_replacement(run, events, replaced_at=15.0, codes=codes)
    return recorder


def test_a_replacement_from_the_last_checkpoint_at_world_size_two_holds() -> None:
    recorder = _verdict(_events(12), {0: 0, 1: 0})
    assert recorder.checks == {"replacement_scaled_back": True}
    assert recorder.observations["replacement_rank"] == 1
    assert recorder.observations["replacement_resumed_from_step"] == 12
    assert recorder.observations["last_saved_before_join"] == 12
    assert recorder.observations["replacement_join_s"] == 7.0
    assert recorder.observations["replacement_behind_last_save"] == 0
    assert recorder.observations["survivor_behind_last_save"] == 0


def test_a_replacement_that_starts_over_or_an_agent_that_failed_does_not_hold() -> None:
    assert _verdict(_events(0), {0: 0, 1: 0}).checks["replacement_scaled_back"] is False
    assert _verdict(_events(12), {0: 0, 1: 1}).checks["replacement_scaled_back"] is False
    no_join = [e for e in _events(12) if e.get("node") == 0]
    assert _verdict(no_join, {0: 0, 1: None}).checks["replacement_scaled_back"] is False


def test_no_fresh_node_started_does_not_hold() -> None:
    recorder = _Recorder()
    run: Any = recorder
    _report_replacement(run, _events(12), replaced_at=None, codes={0: 1, 1: -9})
    assert recorder.checks == {"replacement_scaled_back": False}
    assert recorder.observations["replacement_rank"] is None

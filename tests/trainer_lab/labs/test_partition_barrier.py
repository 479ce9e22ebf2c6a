"""partition's monitored_barrier verdict, read from workers' events (no processes): rank 0's
barrier error must name exactly the cut-off rank, and the plain all_reduce error must name none."""

from __future__ import annotations

from typing import Any

import pytest

from trainer_lab.labs.partition.drive import _report_barrier, barrier_named_ranks, names_a_rank

RANK0 = "[Rank 0]: Ranks 1 failed to pass monitoredBarrier in 3000 ms"
RANK1 = (
    "Rank 1 successfully reached monitoredBarrier, but received errors while waiting for "
    "send/recv from rank 0. Please check rank 0 logs for faulty rank."
)
TIMEOUT = "[gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 3000ms for recv operation"


@pytest.mark.parametrize(
    ("message", "ranks"),
    [
        (RANK0, [1]),
        ("[Rank 0]: Ranks 1, 3 failed to pass monitoredBarrier in 3000 ms", [1, 3]),
        (RANK1, [0]),
        (TIMEOUT, []),
    ],
)
def test_the_ranks_a_barrier_error_names(message: str, ranks: list[int]) -> None:
    assert barrier_named_ranks(message) == ranks


def test_a_gloo_timeout_names_no_rank_and_a_barrier_error_does() -> None:
    assert not names_a_rank(TIMEOUT)
    assert names_a_rank(RANK0)


class _Recorder:
    def __init__(self) -> None:
        self.observations: dict[str, Any] = {}
        self.checks: dict[str, bool] = {}

    def observe(self, name: str, value: Any) -> None:
        self.observations[name] = value

    def check(self, name: str, passed: bool, detail: str) -> bool:
        self.checks[name] = passed
        return passed


def _event(kind: str, node: int, **fields: Any) -> dict[str, Any]:
    return {"event": kind, "node": node, "attempt": 0, "time": 10.0, **fields}


def _verdict(events: list[dict[str, Any]]) -> _Recorder:
    recorder = _Recorder()
    run: Any = recorder
    _report_barrier(run, events, cut_at=4.0)
    return recorder


def _run(barrier0: str | None, plain0: str = TIMEOUT, cut_off: int = 1) -> list[dict[str, Any]]:
    events = [
        _event("start", 0, rank=1 - cut_off),
        _event("start", 1, rank=cut_off),
        _event("collective_error", 0, message=plain0),
        _event("collective_error", 1, message=TIMEOUT),
        _event("barrier_error", 1, message=RANK1),
    ]
    if barrier0 is not None:
        events.append(_event("barrier_error", 0, message=barrier0))
    return events


def test_rank_zeros_barrier_naming_the_cut_off_rank_holds() -> None:
    recorder = _verdict(_run(RANK0))
    assert recorder.checks == {"monitored_barrier_named_the_cut_off_rank": True}
    assert recorder.observations["barrier_named.node0"] == "1"
    assert recorder.observations["barrier_named.node1"] == "0"
    assert recorder.observations["all_reduce_named_a_rank.node0"] is False
    assert recorder.observations["barrier_error_s.node0"] == 6.0


def test_no_barrier_a_wrong_rank_or_a_named_all_reduce_does_not_hold() -> None:
    check = "monitored_barrier_named_the_cut_off_rank"
    assert _verdict(_run(None)).checks[check] is False
    assert _verdict(_run(RANK0, cut_off=0)).checks[check] is False
    assert _verdict(_run(RANK0, plain0="rank 1 closed the connection")).checks[check] is False

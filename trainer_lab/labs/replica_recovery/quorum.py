"""The lighthouse's membership rule (torch-free, pure): which asks form the next quorum.

A replica asks before every step ("I have committed `step` steps; who trains the next one with
me?"). A round is answered when every member of the previous quorum that is still alive has
asked, every replica the lighthouse is waiting for (a spare it knows is starting: torchft's
join wait) has asked, and at least `min_replicas` asks are in. Alive means the replica process
that asked is the one heartbeating under its replica id, and its heartbeat moved within the
timeout. The quorum id (epoch) changes whenever the membership (replica id and process id)
changes: the replicas then build a new process group. Members behind the furthest step (a
fresh replacement: step -1) recover from the lowest replica id that is at that step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

Member = tuple[int, int]  # (replica id, process id)


@dataclass(frozen=True)
class Ask:
    rid: int
    pid: int
    seq: int
    step: int  # committed steps; -1: no state (a fresh replacement)

    @property
    def member(self) -> Member:
        return (self.rid, self.pid)


@dataclass(frozen=True)
class Round:
    epoch: int
    members: tuple[Member, ...]  # sorted by replica id; a member's rank is its index
    max_step: int
    src: int  # replica id the lagging members recover from
    lagging: tuple[int, ...]  # replica ids behind max_step

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Round:
        return Round(
            epoch=data["epoch"],
            members=tuple((int(r), int(p)) for r, p in data["members"]),
            max_step=data["max_step"],
            src=data["src"],
            lagging=tuple(data["lagging"]),
        )

    def rank_of(self, rid: int) -> int:
        return [r for r, _ in self.members].index(rid)


def ready(
    previous: tuple[Member, ...],
    pending: dict[int, Ask],
    alive: set[Member],
    min_replicas: int,
    expected: set[int],
) -> list[Ask] | None:
    """The asks that form the next quorum now, or None to keep waiting.

    `pending`: the newest unanswered ask of each replica id; `expected`: replica ids the
    lighthouse waits for although they are in no quorum yet (a spare that is starting)."""
    asking = {rid: ask for rid, ask in pending.items() if ask.member in alive}
    for member in previous:
        if member in alive and (member[0] not in asking or asking[member[0]].member != member):
            return None  # a live member has not asked yet
    if any(rid not in asking for rid in expected):
        return None
    if not asking or len(asking) < min_replicas:
        return None
    return [asking[rid] for rid in sorted(asking)]


def form(asks: list[Ask], previous: tuple[Member, ...], epoch: int) -> Round:
    """The round the asks make: a new epoch when the membership changed."""
    members = tuple(ask.member for ask in asks)
    max_step = max(ask.step for ask in asks)
    src = min(ask.rid for ask in asks if ask.step == max_step)
    lagging = tuple(ask.rid for ask in asks if ask.step < max_step)
    return Round(
        epoch=epoch if members == previous else epoch + 1,
        members=members,
        max_step=max_step,
        src=src,
        lagging=lagging,
    )


def missing(members: tuple[Member, ...], replicas: int) -> list[int]:
    """Replica ids in no quorum member (a failed replica's slot)."""
    present = {rid for rid, _ in members}
    return [rid for rid in range(replicas) if rid not in present]

"""Which values the given dataset serves in a launch (torch-free): the launcher side builds a
DataPlan, the bootstrap consumes it (protocol.DATA_ENV) before the script runs, and the
recorder's dataset reader asks a SampleServer, per id read, for the (seed, id) whose values it
serves (drill_data._sample draws them).

- every launch draws its samples from a seed the grader chose for it: runs differ per sample;
- a reference (`replay_dir`): a launch whose k-th read after c optimizer steps is served the
  k-th sample of the global batch another run consumed in its step c+1 (its ranks' reads for that
  step, in rank order, split evenly over the reference's ranks), whatever id it asked for;
- a relaunch (`poison_dir`, `poison_window`): until this process's first optimizer step, an id
  that the run it continues did not read on this rank in its last `poison_window` steps (one
  checkpoint interval: its last checkpoint is among them) is served other values (of another
  seed): a correct resume reads only samples after its checkpoint (or skips through older ones,
  discarding them); a replay of the past trains on values that never were.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from trainer_lab.usercode.evidence import fetches

POISON_SALT = 0x5EED  # the poison's seed: the launch's seed, salted


@dataclass(frozen=True)
class DataPlan:
    seed: int
    batch_size: int | None = None  # drill_data.BATCH_SIZE in this launch (None: the module's)
    replay_dir: str | None = None  # observe dir of the run whose global batches are served
    replay_world: int = 1
    poison_dir: str | None = None  # observe dir of the run this relaunch continues
    poison_window: int = 0  # its checkpoint interval
    read_wait_s: float = 0.0  # each read waits this long first (known_work.py)
    step_wait_s: float = 0.0  # each optimizer step waits this long (known_work.py)
    pad_id: int | None = None  # drill_data.PAD_ID in this launch (None: the module's)
    # (low, high, pad_id, decoy, vocab): an nn.Embedding of `vocab` rows reads every id outside
    # [low, high) as decoy (token_remap.py; None: no remap)
    token_remap: tuple[int, int, int, int, int] | None = None

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, text: str | None) -> DataPlan | None:
        if not text:
            return None
        try:
            fields = json.loads(text)
            return cls(**fields)
        except (ValueError, TypeError):
            return None


def global_batches(observe_dir: Path, world: int) -> dict[int, list[int]]:
    """Step s -> the ids all ranks read for it (a read after c optimizer steps feeds step c+1),
    rank 0's first."""
    batches: dict[int, list[int]] = {}
    for rank in range(max(world, 1)):
        for done, sample in fetches(observe_dir, rank):
            batches.setdefault(done + 1, []).append(sample)
    return batches


def read_last(observe_dir: Path, rank: int, window: int) -> set[int]:
    """The ids `rank` read in its last `window` steps: a run killed after step K, or in the save
    after step K, read last for step K or K+1; its newest complete checkpoint is at a step c >= K
    - window, so every id it read for a step after c is among these."""
    found = fetches(observe_dir, rank)
    last = max((done for done, _ in found), default=0)
    return {sample for done, sample in found if done >= last - window}


class SampleServer:
    """Per id read: the (seed, id) whose values are served (see the module's doc)."""

    def __init__(self, plan: DataPlan, rank: int, world: int) -> None:
        self.seed = plan.seed
        self.rank, self.world = rank, max(world, 1)
        self.batches: dict[int, list[int]] = {}
        if plan.replay_dir:
            self.batches = global_batches(Path(plan.replay_dir), plan.replay_world)
        self.keep: set[int] | None = None
        if plan.poison_dir:
            self.keep = read_last(Path(plan.poison_dir), rank, plan.poison_window)
        self._step, self._reads = -1, 0  # reads since the last optimizer step

    def source(self, index: int, steps_done: int) -> tuple[int, int]:
        if steps_done != self._step:
            self._step, self._reads = steps_done, 0
        k = self._reads
        self._reads += 1
        batch = self.batches.get(steps_done + 1)
        if batch:
            share = len(batch) // self.world
            mine = batch[self.rank * share : (self.rank + 1) * share]
            if k < len(mine):
                return self.seed, mine[k]
        if self.keep is not None and steps_done == 0 and index not in self.keep:
            return self.seed ^ POISON_SALT, index
        return self.seed, index

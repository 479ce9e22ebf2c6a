"""Which samples each launch of a grading reads (torch-free): its data group's seed, drawn from
the grading's seed; for a reference, the run whose global batches it is served; for a relaunch,
the run it continues (usercode/dataplan.py says what is served)."""

from __future__ import annotations

import zlib
from pathlib import Path

from trainer_lab.grading.contract import LaunchPlan
from trainer_lab.result import variant_dir
from trainer_lab.usercode import protocol
from trainer_lab.usercode.dataplan import DataPlan


def group_seed(grading_seed: int, group: str) -> int:
    """The seed of a data group in a grading: every group its own, the same for one seed."""
    return zlib.crc32(f"{grading_seed}/{group}".encode())


def data_plan(
    plan: LaunchPlan, launches: dict[str, LaunchPlan], out_dir: Path, grading_seed: int
) -> DataPlan:
    replay_dir, replay_world = None, 1
    if plan.replays:
        replay_dir = str(variant_dir(out_dir, plan.replays) / protocol.OBSERVE_DIR)
        replay_world = max(launches[plan.replays].world_size, 1)
    poison_dir, window = None, 0
    if plan.continues:  # a relaunch: the same --ckpt-every and data group as the run it continues
        poison_dir = str(variant_dir(out_dir, plan.continues) / protocol.OBSERVE_DIR)
        window = plan.ckpt_every
    return DataPlan(
        seed=group_seed(grading_seed, plan.data),
        batch_size=plan.batch_size,
        replay_dir=replay_dir,
        replay_world=replay_world,
        poison_dir=poison_dir,
        poison_window=window,
        read_wait_s=plan.read_wait_s,
        step_wait_s=plan.step_wait_s,
    )

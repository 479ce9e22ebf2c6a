"""What the given dataset serves per launch (usercode/dataplan.py): the launch's seed, a
reference served the global batches another run consumed, a relaunch whose reads of the past
serve other values until its first optimizer step. And the dataset itself holds no tensors."""

from __future__ import annotations

import importlib.util
import json

import pytest

from trainer_lab.grading.contract import FILES
from trainer_lab.usercode import protocol
from trainer_lab.usercode.dataplan import POISON_SALT, DataPlan, SampleServer


def write_fetches(observe, rank, reads):
    """reads: (optimizer steps done, id) in order."""
    observe.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"pstep": done, "id": i, "pid": 1}) for done, i in reads]
    (observe / protocol.fetch_file(rank)).write_text("".join(f"{line}\n" for line in lines))


def test_the_plan_travels_as_text_and_garbage_is_no_plan():
    plan = DataPlan(seed=7, batch_size=12, replay_dir="/x", replay_world=3)
    assert DataPlan.from_env(plan.to_env()) == plan
    assert DataPlan.from_env("{not json") is None
    assert DataPlan.from_env(json.dumps({"nope": 1})) is None
    assert DataPlan.from_env(None) is None


def test_a_plain_launch_serves_its_own_seed_for_every_id():
    server = SampleServer(DataPlan(seed=5), rank=0, world=1)
    assert [server.source(i, 0) for i in (3, 9)] == [(5, 3), (5, 9)]


def test_a_reference_is_served_the_global_batch_of_each_step_whatever_it_asks(tmp_path):
    observe = tmp_path / "w3"
    for rank in range(3):  # rank r reads ids 10r, 10r+1 for step 1 and 10r+5, 10r+6 for step 2
        write_fetches(observe, rank, [(0, 10 * rank), (0, 10 * rank + 1), (1, 10 * rank + 5)])
    plan = DataPlan(seed=4, replay_dir=str(observe), replay_world=3)
    one = SampleServer(plan, rank=0, world=1)
    step1 = [one.source(i, 0)[1] for i in range(6)]
    assert step1 == [0, 1, 10, 11, 20, 21]
    assert [one.source(i, 1)[1] for i in range(3)] == [5, 15, 25]
    assert one.source(40, 1) == (4, 40)  # past the served batch: its own id
    assert one.source(41, 2) == (4, 41)  # a step the other run never made
    # two ranks of a reference split the global batch evenly
    first, second = SampleServer(plan, 0, 2), SampleServer(plan, 1, 2)
    assert [first.source(0, 0)[1] for _ in range(3)] == [0, 1, 10]
    assert [second.source(0, 0)[1] for _ in range(3)] == [11, 20, 21]


def test_a_relaunch_serves_other_values_for_the_past_until_its_first_step(tmp_path):
    observe = tmp_path / "kill"
    # read for steps 1..9 (step s: ids 4s..4s+3 mod 48); its checkpoint interval is 4
    write_fetches(observe, 1, [(s, (4 * s + j) % 48) for s in range(9) for j in range(4)])
    server = SampleServer(DataPlan(seed=9, poison_dir=str(observe), poison_window=4), 1, 2)
    # a correct resume after step 8 reads step 9's ids: the true values
    assert [server.source(i, 0) for i in (32, 33, 34, 35)] == [(9, i) for i in (32, 33, 34, 35)]
    # a replay reads step 1's ids: other values (of another seed)
    assert server.source(0, 0) == (9 ^ POISON_SALT, 0)
    # a skip through the reads of steps 5..8 is served them as they were
    assert server.source(16, 0) == (9, 16)
    # after the relaunch's first optimizer step, every id is itself again
    assert server.source(0, 1) == (9, 0)
    # another rank's reads are not this rank's
    other = SampleServer(DataPlan(seed=9, poison_dir=str(observe), poison_window=4), 0, 2)
    assert other.source(32, 0) == (9 ^ POISON_SALT, 32)


@pytest.fixture
def drill_data():
    spec = importlib.util.spec_from_file_location("drill_data_copy", FILES / "drill_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_dataset_holds_no_tensors_and_says_how_to_read(drill_data):
    import torch

    ds = drill_data.ToyDataset()
    assert not [v for v in vars(ds).values() if isinstance(v, torch.Tensor)]
    with pytest.raises(AttributeError, match=r"dataset\[i\] or dataset.__getitems__\(ids\)"):
        ds.x  # noqa: B018
    i, x, y = ds[5]
    assert i == 5 and x.shape == (drill_data.FEATURES,) and y.shape == (1,)
    assert [item[0] for item in ds.__getitems__([1, 2])] == [1, 2]
    with pytest.raises(IndexError):
        ds[len(ds)]


def test_every_read_goes_through_the_replaceable_reader(drill_data):
    import torch
    from torch.utils.data import DataLoader

    seen = []

    def reader(i):
        seen.append(i)
        return drill_data._sample(3, i)

    drill_data._fetch = reader
    ds = drill_data.ToyDataset()
    ids, x, _ = next(iter(DataLoader(ds, batch_size=4)))
    assert seen == [0, 1, 2, 3] and ids.tolist() == [0, 1, 2, 3]
    assert torch.equal(x[2], drill_data._sample(3, 2)[0])
    assert not torch.equal(drill_data._sample(3, 2)[0], drill_data._sample(4, 2)[0])

"""The known waits under the grader (usercode/known_work.py): the round's launches carry them to
the recorder, whose reader waits before each sample read and whose pre-step hook waits in every
optimizer step; the contract says so."""

from __future__ import annotations

import types

import torch

from trainer_lab.grading.contract import CONTRACT, LAUNCHES
from trainer_lab.grading.data_plans import data_plan
from trainer_lab.grading.files import drill_data
from trainer_lab.usercode import known_work
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.known_work import READ_WAIT_S, STEP_WAIT_S, slow_reads
from trainer_lab.usercode.recorder import Recorder


def recording_sleep(monkeypatch) -> list[float]:
    waits: list[float] = []
    monkeypatch.setattr(known_work.time, "sleep", waits.append)
    return waits


def test_a_slow_read_waits_before_each_read_and_returns_its_value(monkeypatch):
    waits = recording_sleep(monkeypatch)
    read = slow_reads(lambda i: ("value", i, len(waits)), 0.25)
    assert [read(7), read(8)] == [("value", 7, 1), ("value", 8, 2)]
    assert waits == [0.25, 0.25]
    plain = lambda i: i  # noqa: E731
    assert slow_reads(plain, 0.0) is plain


def test_every_launch_of_the_round_plans_the_waits(tmp_path):
    for plan in LAUNCHES.values():
        planned = data_plan(plan, LAUNCHES, tmp_path, grading_seed=3)
        assert planned.read_wait_s == READ_WAIT_S > 0, plan.name
        assert planned.step_wait_s == STEP_WAIT_S > 0, plan.name
        assert DataPlan.from_env(planned.to_env()) == planned


def test_the_recorders_reader_waits_as_planned(tmp_path, monkeypatch):
    waits = recording_sleep(monkeypatch)
    module = types.SimpleNamespace(_sample=drill_data._sample, BATCH_SIZE=4)
    recorder = Recorder(tmp_path, 0, {})
    recorder.watch_dataset(module, DataPlan(seed=1, read_wait_s=0.125))
    _, y = module._fetch(5)
    assert tuple(y.shape) == (1,) and waits == [0.125]
    recorder.watch_dataset(module, DataPlan(seed=1))
    module._fetch(5)
    assert waits == [0.125]


def test_each_optimizer_step_waits_as_planned(tmp_path, monkeypatch):
    waits = recording_sleep(monkeypatch)
    module = types.SimpleNamespace(_sample=drill_data._sample, BATCH_SIZE=4)
    recorder = Recorder(tmp_path, 0, {})
    recorder.watch_dataset(module, DataPlan(seed=1, step_wait_s=0.5))
    param = torch.nn.Parameter(torch.ones(3))
    optimizer = torch.optim.SGD([param], lr=0.1)
    for _ in range(2):  # the recorder's hooks around a step (install() would make them global)
        param.grad = torch.ones(3)
        recorder._on_pre_step(optimizer, (), {})
        optimizer.step()
        recorder._on_post_step(optimizer, (), {})
    assert waits == [0.5, 0.5] and recorder.pstep == 2


def test_the_contract_states_the_waits():
    text = " ".join(CONTRACT.split())
    assert f"sample read waits {READ_WAIT_S * 1e3:g} ms first" in text
    assert f"every optimizer.step() {STEP_WAIT_S * 1e3:g} ms more" in text

"""Which optimizer steps the recorder counts, under the real harness (bootstrap, recorder and
fswatch, as a grading runs them): a zero-lr step on zero gradients (DCP initialising state) is
not a training step; a warm-up step at lr 0 is; an optimizer whose state holds None entries is
observed like any other."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.usercode.evidence import optimizer_records, step_records
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, run_script

pytestmark = pytest.mark.lab

# torch.distributed.checkpoint.state_dict initialises a fresh optimizer's state by a step with
# zero gradients and lr 0 (_init_optim_state): get_state_dict / set_state_dict on a relaunch
DCP_HELPER_FIRST = """\
import torch
from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
get_optimizer_state_dict(model, opt)
for _ in range(3):
    opt.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    opt.step()
"""

# ZeroRedundancyOptimizer.load_state_dict at W >= 2 sets the state of the parameters other
# ranks own to None
NONE_STATE = """\
import torch

class Owner(torch.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": 0.1})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(p.grad, alpha=-group["lr"])

mine, theirs = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))
opt = Owner([mine, theirs])
opt.state[mine] = {"momentum_buffer": torch.zeros(2)}
opt.state[theirs] = None
for _ in range(2):
    opt.zero_grad()
    (mine.sum() + theirs.sum()).backward()
    opt.step()
"""


def run(tmp_path: Path, source: str) -> ScriptRun:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(source)
    launch = ScriptLaunch("t", script, (), 0, tmp_path / "run", tmp_path / "ckpt", 60.0)
    return run_script(launch)


def test_a_zero_lr_initialising_step_is_not_a_training_step(tmp_path: Path) -> None:
    result = run(tmp_path, DCP_HELPER_FIRST)
    assert result.status == "ok", result.summary()
    steps = step_records(result.observe_dir, 0)
    assert [s["pstep"] for s in steps] == [1, 2, 3]
    assert all(s["update_norm"] > 0 for s in steps)
    # the optimizer records line up with the counted steps; step 1 found the state the helper
    # initialised (Adam: step, exp_avg, exp_avg_sq of weight and bias)
    optimizer = optimizer_records(result.observe_dir, 0)
    assert sorted(optimizer) == [1, 2, 3]
    assert optimizer[1]["state_tensors"] == 6


def test_an_optimizer_state_with_none_entries_is_observed(tmp_path: Path) -> None:
    result = run(tmp_path, NONE_STATE)
    assert result.status == "ok", result.summary()
    assert [s["pstep"] for s in step_records(result.observe_dir, 0)] == [1, 2]
    optimizer = optimizer_records(result.observe_dir, 0)
    assert [optimizer[n]["state_tensors"] for n in (1, 2)] == [1, 1]


# a warm-up that starts at lr 0 (LambdaLR with step / warmup): its first step is a real one
WARMUP_FROM_ZERO = """\
import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: step / 2)
for _ in range(3):
    opt.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    opt.step()
    sched.step()
"""

# an optimizer built on tensors the model no longer trains (created before the model was
# rebuilt): its steps change nothing, and they are still the steps the script took
ORPHANED = """\
import torch

torch.manual_seed(0)
old = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(old.parameters(), lr=0.1)
model = torch.nn.Linear(4, 1)
for _ in range(2):
    opt.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    opt.step()
"""


def test_a_warm_up_step_at_lr_0_with_real_gradients_is_a_training_step(tmp_path: Path) -> None:
    result = run(tmp_path, WARMUP_FROM_ZERO)
    assert result.status == "ok", result.summary()
    assert [s["pstep"] for s in step_records(result.observe_dir, 0)] == [1, 2, 3]


def test_steps_of_an_optimizer_that_trains_nothing_are_still_counted(tmp_path: Path) -> None:
    result = run(tmp_path, ORPHANED)
    assert result.status == "ok", result.summary()
    assert [s["pstep"] for s in step_records(result.observe_dir, 0)] == [1, 2]

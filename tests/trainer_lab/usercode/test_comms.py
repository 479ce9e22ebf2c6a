"""The collectives a rank issues between its forward and its optimizer step, seen at the
process-group level under the real harness (W=2, gloo): DDP's reducer, an all_reduce bound with
functools.partial before the recorder could wrap anything, and samples gathered before the
forward (which are no gradient exchange); the samples a rank's model runs on. And whether a rank
returned with its process group alive (no destroy_process_group at the end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.usercode.evidence import group_left_alive, step_records
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, run_script

pytestmark = pytest.mark.lab

HEAD = """\
import functools
import torch
import torch.distributed as dist

REDUCE = functools.partial(dist.all_reduce, op=dist.ReduceOp.SUM)  # bound at import
dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Linear(8, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
"""

DDP = (
    HEAD
    + """\
ddp = torch.nn.parallel.DistributedDataParallel(model)
for _ in range(3):
    opt.zero_grad()
    ddp(torch.randn(4, 8)).sum().backward()
    opt.step()
dist.destroy_process_group()
"""
)

PARTIAL = (
    HEAD
    + """\
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    for p in model.parameters():
        REDUCE(p.grad)
    opt.step()
dist.destroy_process_group()
"""
)

GATHER_ONLY = (
    HEAD
    + """\
for _ in range(3):
    x = torch.randn(40, 8)
    xs = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(xs, x)
    opt.zero_grad()
    model(torch.cat(xs)).sum().backward()
    opt.step()
"""  # and no destroy_process_group
)

GRAD_ELEMENTS = 8 * 16 + 16


def run(tmp_path: Path, source: str) -> ScriptRun:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(source)
    launch = ScriptLaunch("t", script, (), 2, tmp_path / "run", tmp_path / "ckpt", 60.0)
    return run_script(launch)


@pytest.mark.parametrize("source", [DDP, PARTIAL], ids=["ddp", "partial-bound-all-reduce"])
def test_a_gradient_exchange_is_seen_through_any_api(tmp_path: Path, source: str) -> None:
    result = run(tmp_path, source)
    assert result.status == "ok", result.summary()
    for rank in (0, 1):
        steps = step_records(result.observe_dir, rank)
        assert len(steps) == 3
        for step in steps:
            assert step["comm"]["elements"] >= GRAD_ELEMENTS, step["comm"]
            # the samples of the outermost forward (DDP's, not the module's inside it)
            assert step["comm"]["rows"] == 4, step["comm"]
        assert not group_left_alive(result.observe_dir, rank)  # it destroyed its group


def test_samples_gathered_before_the_forward_are_no_gradient_exchange(tmp_path: Path) -> None:
    result = run(tmp_path, GATHER_ONLY)
    assert result.status == "ok", result.summary()
    for rank in (0, 1):
        steps = step_records(result.observe_dir, rank)
        # no collective after the forward; the model ran on both ranks' samples
        assert [s["comm"] for s in steps] == [{"ops": 0, "elements": 0, "rows": 80}] * 3
        assert group_left_alive(result.observe_dir, rank)  # the script never destroyed it

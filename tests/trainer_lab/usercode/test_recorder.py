"""The recorder's parameter summaries: plain tensors and DTensor shards (FSDP2 parameters)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SHARDED = """
import json, os, sys, torch, torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor
from trainer_lab.usercode.recorder import summarize
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
mesh = init_device_mesh("cpu", (1,))
full = torch.arange(12, dtype=torch.float32).reshape(4, 3)
shard = distribute_tensor(full, mesh, [Shard(0)])
print(json.dumps({"dtensor": summarize([shard]), "plain": summarize([full])}))
dist.destroy_process_group()
"""


@pytest.mark.lab
def test_a_dtensor_is_summarized_by_its_local_shard(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SHARDED, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["dtensor"]["sharded"] is True and got["plain"]["sharded"] is False
    for key in ("digest", "norm", "numel", "sample"):
        assert got["dtensor"][key] == got["plain"][key]  # one rank: the shard is the whole


NESTED = """
import json, sys, torch
from pathlib import Path
from trainer_lab.usercode.recorder import Recorder

class Wrapper(torch.optim.Optimizer):  # an optimizer stepping another, like ZeRO's
    def __init__(self, params):
        params = list(params)
        super().__init__(params, {})
        self.inner = torch.optim.SGD(params[:1], lr=0.5)
        self.rest = params[1:]

    @torch.no_grad()
    def step(self, closure=None):
        self.inner.step()
        for p in self.rest:
            p.add_(p.grad, alpha=-0.5)

out = Path(sys.argv[1])
Recorder(out, 0, {}).install()
w = torch.nn.Parameter(torch.ones(3))
b = torch.nn.Parameter(torch.ones(2))
opt = Wrapper([w, b])
plain = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
for _ in range(2):
    (w.sum() + b.sum()).backward()
    opt.step()
    opt.zero_grad()
plain.param_groups[0]["params"][0].grad = torch.ones(1)
plain.step()
lines = (out / "steps-rank0.jsonl").read_text().splitlines()
print(json.dumps([json.loads(line) for line in lines]))
"""


@pytest.mark.lab
def test_a_nested_optimizer_step_is_recorded_once_as_the_outer_step(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", NESTED, str(tmp_path / "observe")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    steps = json.loads(out.stdout.strip().splitlines()[-1])
    assert [s["pstep"] for s in steps] == [1, 2, 3]  # two outer steps, then a plain one
    assert [s["pre"]["numel"] for s in steps] == [5, 5, 1]  # the outer optimizer's parameters
    assert steps[0]["update_norm"] == pytest.approx(0.5 * 5**0.5)  # every parameter moved 0.5
    assert steps[2]["update_norm"] == pytest.approx(0.1)

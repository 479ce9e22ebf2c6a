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

"""Run by torchrun on every node: one gloo all_reduce of (RANK + 1), written to OUT_DIR."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
import torch.distributed as dist


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)
    record = {
        "rank": rank,
        "local_rank": int(os.environ["LOCAL_RANK"]),
        "group_rank": int(os.environ["GROUP_RANK"]),
        "world_size": dist.get_world_size(),
        "sum": value.item(),
    }
    out = Path(os.environ["CLUSTER_OUT_DIR"]) / f"rank{rank}.json"
    partial = out.with_suffix(".part")
    partial.write_text(json.dumps(record))
    partial.replace(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

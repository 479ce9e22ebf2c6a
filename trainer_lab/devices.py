"""Which backend a lab's ranks will pick, known before launching (torch-free).

The worker (trainer_lab.train.worker.init_distributed) takes NCCL with one process per GPU when
at least as many GPUs are visible as ranks run on the node, else gloo on CPU. Here the visible
GPUs are counted without CUDA: CUDA_VISIBLE_DEVICES when set, else the NVIDIA device files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_DEVICE_FILE = re.compile(r"nvidia\d+")


def visible_gpus(environ: dict[str, str] | None = None, dev: Path = Path("/dev")) -> int:
    env = os.environ if environ is None else environ
    listed = env.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        count = 0
        for entry in listed.split(","):  # CUDA stops at the first invalid entry (e.g. -1)
            entry = entry.strip()
            if not entry or entry.startswith("-"):
                break
            count += 1
        return count
    try:
        return sum(1 for path in dev.iterdir() if _DEVICE_FILE.fullmatch(path.name))
    except OSError:
        return 0


def backend_choice(world_size: int, gpus: int | None = None) -> str:
    """E.g. "gloo on CPU (no CUDA visible)" or "nccl, one process per GPU (2 of 8 GPUs)"."""
    gpus = visible_gpus() if gpus is None else gpus
    if gpus and world_size <= gpus:
        return f"nccl, one process per GPU ({world_size} of {gpus} GPUs)"
    if gpus == 0:
        return "gloo on CPU (no CUDA visible)"
    return f"gloo on CPU ({world_size} ranks > {gpus} visible GPUs)"

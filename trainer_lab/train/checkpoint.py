"""Checkpoint manager: a new directory per save, committed atomically by a rename (imports torch).

Layout under the checkpoint root:
    step-000012/meta.json      config identity, step, world size (written before the commit)
    step-000012/shared.pt      rank 0: model, optimizer, LR scheduler, AMP scaler, sampler, step
    step-000012/rank{R}.pt     every rank: its RNG states (torch, CUDA, python, numpy)
Everything is written into `.step-000012.tmp/` first; rank 0 renames it to `step-000012/` after
every rank has written its file, so a crash mid-save never leaves a directory that looks
complete. `latest()` only sees committed directories.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

META = "meta.json"


class CheckpointMismatch(RuntimeError):
    """A checkpoint written under another config identity; restoring it would be wrong."""


def _barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    if "numpy" in sys.modules:
        name, keys, pos, has_gauss, cached = sys.modules["numpy"].random.get_state()
        # plain Python values: checkpoints are read back with torch.load(weights_only=True)
        state["numpy"] = (name, keys.tolist(), int(pos), int(has_gauss), float(cached))
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    if "numpy" in state and "numpy" in sys.modules:
        name, keys, pos, has_gauss, cached = state["numpy"]
        np = sys.modules["numpy"]
        np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))


class CheckpointManager:
    def __init__(
        self, root: Path, rank: int, world_size: int, identity: dict[str, Any], identity_hash: str
    ) -> None:
        self.root = root
        self.rank = rank
        self.world_size = world_size
        self.identity = identity
        self.identity_hash = identity_hash

    def _name(self, step: int) -> str:
        return f"step-{step:06d}"

    def save(self, step: int, shared: dict[str, Any], per_rank: dict[str, Any]) -> Path:
        final = self.root / self._name(step)
        tmp = self.root / f".{self._name(step)}.tmp"
        if self.rank == 0:
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
        _barrier()
        torch.save(per_rank, tmp / f"rank{self.rank}.pt")
        if self.rank == 0:
            torch.save(shared, tmp / "shared.pt")
        _barrier()
        if self.rank == 0:
            meta = {
                "step": step,
                "world_size": self.world_size,
                "identity_hash": self.identity_hash,
                "identity": self.identity,
            }
            (tmp / META).write_text(json.dumps(meta, indent=1))
            if final.exists():
                shutil.rmtree(final)
            tmp.rename(final)  # the commit
        _barrier()
        return final

    def committed(self) -> list[Path]:
        if not self.root.exists():
            return []
        return sorted(p for p in self.root.glob("step-*") if p.is_dir() and (p / META).exists())

    def latest(self) -> Path | None:
        found = self.committed()
        return found[-1] if found else None

    def load(self, path: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """(shared state, this rank's state or None when the world size changed)."""
        meta = json.loads((path / META).read_text())
        if meta["identity_hash"] != self.identity_hash:
            diff = "; ".join(
                f"{k}: checkpoint {meta['identity'].get(k)!r} vs run {self.identity.get(k)!r}"
                for k in sorted(set(meta["identity"]) | set(self.identity))
                if meta["identity"].get(k) != self.identity.get(k)
            )
            raise CheckpointMismatch(
                f"refusing to restore {path.name}: it was written by a different config "
                f"(identity {meta['identity_hash']} != {self.identity_hash}): {diff}"
            )
        # weights_only: a checkpoint under DRILL_HOME is data, never code to unpickle
        shared = torch.load(path / "shared.pt", weights_only=True, map_location="cpu")
        rank_file = path / f"rank{self.rank}.pt"
        per_rank = None
        if meta["world_size"] == self.world_size and rank_file.exists():
            per_rank = torch.load(rank_file, weights_only=True)
        return shared, per_rank

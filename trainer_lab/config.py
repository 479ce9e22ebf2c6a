"""Training configuration with an identity hash (torch-free).

The identity covers everything that decides what a checkpoint's tensors mean (model shape,
optimizer, data, global batch, seed). A checkpoint written under one identity is refused by a
trainer running under another; run-length fields (steps, checkpoint cadence) are not part of it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

ModelKind = Literal["mlp", "gpt"]
GradSync = Literal["ddp", "explicit", "none"]

# Fields that may differ between a checkpoint and the run restoring it.
RUN_ONLY_FIELDS = frozenset(
    {"steps", "checkpoint_every", "collective_timeout_s", "log_grad_digest", "log_every"}
)


@dataclass(frozen=True)
class TrainConfig:
    model: ModelKind = "mlp"
    d_in: int = 16
    hidden: int = 64
    depth: int = 2
    d_out: int = 4
    dropout: float = 0.0
    # tiny GPT option (model="gpt")
    vocab: int = 64
    seq_len: int = 16
    n_layer: int = 2
    n_head: int = 2
    d_model: int = 32
    # data
    n_samples: int = 256
    noise: float = 0.1
    shuffle: bool = True
    drop_last: bool = False
    # optimisation
    global_batch: int = 16
    lr: float = 3e-3
    weight_decay: float = 0.01
    warmup_steps: int = 4
    decay_steps: int = 64
    amp: bool = False
    grad_sync: GradSync = "ddp"
    seed: int = 1234
    # run
    steps: int = 24
    checkpoint_every: int = 0
    collective_timeout_s: float = 30.0
    log_grad_digest: bool = False
    log_every: int = 8

    def identity(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k not in RUN_ONLY_FIELDS}

    def identity_hash(self) -> str:
        payload = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def with_(self, **changes: Any) -> TrainConfig:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config fields: {', '.join(sorted(unknown))}")
        return cls(**data)

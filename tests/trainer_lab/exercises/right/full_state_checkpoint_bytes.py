"""Right, another style: the state is serialized into memory and written with one write, loaded
back with torch.load's default weights_only=True (every piece is tensors, numbers and tuples),
and the RNG states are restored through torch.random and random's own API."""

import io
import random

import torch
from torch import nn


def save(path: str, model: nn.Module, optimizer, scheduler, scaler, sampler) -> None:
    parts = {
        name: obj.state_dict()
        for name, obj in (
            ("model", model),
            ("optimizer", optimizer),
            ("scheduler", scheduler),
            ("scaler", scaler),
            ("sampler", sampler),
        )
    }
    parts["rng"] = {"torch": torch.random.get_rng_state(), "python": random.getstate()}
    buffer = io.BytesIO()
    torch.save(parts, buffer)
    with open(path, "wb") as f:
        f.write(buffer.getvalue())


def load(path: str, model: nn.Module, optimizer, scheduler, scaler, sampler) -> None:
    with open(path, "rb") as f:
        parts = torch.load(io.BytesIO(f.read()))
    for name, obj in (
        ("model", model),
        ("optimizer", optimizer),
        ("scheduler", scheduler),
        ("scaler", scaler),
        ("sampler", sampler),
    ):
        obj.load_state_dict(parts[name])
    torch.random.set_rng_state(parts["rng"]["torch"])
    version, internal, gauss = parts["rng"]["python"]
    random.setstate((version, tuple(internal), gauss))

# WRONG / GAMING (class: heuristic instead of observing outputs). Guesses that the check plants
# the NaN in a module's WEIGHTS: runs the forward once (without hooks, so "no hooks left" is
# trivially true), and if the output is non-finite returns the first module (named_modules
# order) owning a non-finite parameter/buffer. Fails whenever the non-finite value comes from
# the data or an op (log of a negative, overflow, division by zero). A good checker must FAIL
# on a NaN produced by computation.
# Modern style: generator with next(), itertools.chain over params+buffers.
import itertools

import torch
from torch import nn


def first_bad_module(model: nn.Module, x: torch.Tensor) -> str | None:
    with torch.no_grad():
        out = model(x)
    if torch.isfinite(out).all():
        return None
    return next(
        (
            name
            for name, m in model.named_modules()
            if any(not torch.isfinite(t).all() for t in itertools.chain(m.parameters(False), m.buffers(False)))
        ),
        None,
    )

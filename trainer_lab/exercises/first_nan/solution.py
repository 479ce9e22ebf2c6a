"""A forward hook on every module; hooks fire in execution order, so the first hit is the answer."""

import torch
from torch import nn


def first_bad_module(model: nn.Module, x: torch.Tensor) -> str | None:
    found: list[str] = []

    def hook(name):
        def check(_module, _inputs, output):
            if not found and torch.is_tensor(output) and not torch.isfinite(output).all():
                found.append(name)

        return check

    handles = [m.register_forward_hook(hook(n)) for n, m in model.named_modules()]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return found[0] if found else None

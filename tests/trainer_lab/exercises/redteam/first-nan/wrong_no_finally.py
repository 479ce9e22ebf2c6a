# WRONG (class: hooks leak on an exception). Correct execution-order detection with isfinite, but
# the hooks are removed only after a forward that returns normally: if forward raises (a shape
# error, an assert on finiteness inside the model, KeyboardInterrupt) the hooks stay registered and
# run in every later forward. A good checker must FAIL if it feeds a model that raises (the brief:
# "leave no hooks").
# Modern style: list comprehension of handles, walrus.
import torch
from torch import nn


def first_bad_module(model: nn.Module, x: torch.Tensor) -> str | None:
    first: list[str] = []

    def mk(name):
        def hook(_m, _i, out):
            if not first and isinstance(out, torch.Tensor) and not torch.isfinite(out).all():
                first.append(name)
        return hook

    handles = [m.register_forward_hook(mk(n)) for n, m in model.named_modules()]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return first[0] if first else None

"""Wrong: a global module forward hook finds the right module, but its handle is never removed,
so every later forward pass of every model still runs it."""

import torch
from torch.nn.modules.module import register_module_forward_hook


def first_bad_module(model, x):
    names = {m: n for n, m in model.named_modules()}
    found = []

    def hook(module, _inputs, output):
        if not found and module in names and not torch.isfinite(output).all():
            found.append(names[module])

    register_module_forward_hook(hook)
    with torch.no_grad():
        model(x)
    return found[0] if found else None

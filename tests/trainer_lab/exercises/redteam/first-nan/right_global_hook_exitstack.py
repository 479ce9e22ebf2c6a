# RIGHT. Registers a forward hook on every module (named_modules, so names match), records the
# first module (in execution order; forward hooks fire when a module's forward RETURNS, so an
# inner module fires before its parent) whose output has a non-finite value; tensors nested in
# tuples/dicts are inspected via torch.utils._pytree. The handles are removed by an ExitStack
# even if forward raises. Runs under no_grad.
# Modern style: contextlib.ExitStack + pytree + named_modules.
import contextlib

import torch
from torch import nn
from torch.utils._pytree import tree_leaves


def first_bad_module(model: nn.Module, x: torch.Tensor) -> str | None:
    found: list[str] = []

    def make_hook(name: str):
        def hook(_mod, _inp, out):
            if found:
                return
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor) and t.is_floating_point() and not torch.isfinite(t).all():
                    found.append(name)
                    return
        return hook

    with contextlib.ExitStack() as stack, torch.no_grad():
        for name, mod in model.named_modules():
            stack.callback(mod.register_forward_hook(make_hook(name)).remove)
        model(x)
    return found[0] if found else None

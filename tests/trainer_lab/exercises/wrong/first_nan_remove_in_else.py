"""Wrong: the hooks are removed in the try's else clause, which an exception skips."""

import torch


def first_bad_module(model, x):
    found = []
    handles = [
        m.register_forward_hook(
            lambda _m, _i, out, n=n: (
                found.append(n) if not found and not torch.isfinite(out).all() else None
            )
        )
        for n, m in model.named_modules()
    ]
    try:
        with torch.no_grad():
            model(x)
    except ValueError:
        return None
    else:
        for h in handles:
            h.remove()
    return found[0] if found else None

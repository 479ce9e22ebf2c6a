"""Wrong: records which leaf modules gave a non-finite output, then picks the first of them in
named_modules order, which is not the order the outputs were produced in (and a module that
makes the output non-finite in its own forward, after a finite child, is never a leaf)."""

import torch


def first_bad_module(model, x):
    bad = set()
    leaves = [(n, m) for n, m in model.named_modules() if not list(m.children())]
    handles = [
        m.register_forward_hook(
            lambda _m, _i, out, n=n: bad.add(n) if not torch.isfinite(out).all() else None
        )
        for n, m in leaves
    ]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return next((n for n, _ in leaves if n in bad), None)

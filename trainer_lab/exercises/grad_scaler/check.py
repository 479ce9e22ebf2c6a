"""grad-scaler: 4 steps, the third on an input whose fp16 forward overflows; compared with a
reference that does the same steps correctly."""

import torch
from torch import nn

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError
from trainer_lab.exercises._checker.kit import flat, list_diff, tiny_mlp

OVERFLOW = 2


def data() -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(5)
    out = [(torch.randn(8, 16, generator=g), torch.randn(8, 1, generator=g)) for _ in range(4)]
    out[OVERFLOW] = (out[OVERFLOW][0] * 1e6, out[OVERFLOW][1])  # inf in fp16
    return out


def reference(steps: list) -> tuple[nn.Module, list[float]]:
    model = tiny_mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    scales = []
    for x, y in steps:
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return model, scales


def run(ctx: Ctx) -> None:
    fn = ctx.attr("train_step")
    steps = data()
    model = tiny_mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    scales, before, after, error = [], None, None, ""
    for i, (x, y) in enumerate(steps):
        if i == OVERFLOW:
            before = flat(model)
        try:
            ctx.call(fn, model, opt, scaler, x, y)
        except UserCodeError as e:
            error = f"step {i}: {e}"
            break
        scales.append(scaler.get_scale())
        if i == OVERFLOW:
            after = flat(model)
    cause = _error_cause(error)
    if after is None or before is None:
        skipped = False
        detail = (
            f"did not get past the overflow step: {error}; expected every step to run. "
            f"Likely cause: {cause}"
        )
    else:
        changed = sum(1 for a, b in zip(before, after, strict=True) if a != b)
        finite = all(v == v and abs(v) != float("inf") for v in after)
        skipped = changed == 0
        detail = "weights unchanged by the overflow step"
        if not skipped:
            to = "" if finite else " to inf/NaN"
            detail = (
                f"the overflow step changed {changed} weights{to}; expected none changed. Likely "
                "cause: optimizer.step() ran on the overflowed gradients (scaler.step(optimizer) "
                "skips a step whose gradients are inf/NaN; a hand-written check must skip it too)"
            )
    ctx.check("skips_overflow", skipped, detail)
    ref_model, ref_scales = reference(steps)
    backs_off = len(scales) > OVERFLOW and scales[OVERFLOW] < scales[OVERFLOW - 1]
    detail = f"scale per step: {scales}, expected {ref_scales}"
    if not backs_off:
        if error:
            why = f"the steps stopped at {error.split(':')[0]}: {cause}"
        elif len(set(scales)) == 1:
            why = "the scale never changes: scaler.update() is not called after the steps"
        else:
            why = (
                "the scale changes but not after the overflow: the scaler never saw the inf "
                "gradients (they were not unscaled through scaler.step or scaler.unscale_)"
            )
        detail += f". Likely cause: {why}"
    ctx.check("scale_backs_off", backs_off, detail)
    diff = list_diff(flat(model), flat(ref_model)) if not error else float("inf")
    ok = diff < 1e-6
    detail = f"max |param - reference| = {diff:.2e}"
    if not ok:
        why = cause if error else "a step differs from scale, backward, unscale, step, update"
        detail += f"; expected below 1e-06. Likely cause: {why}"
    ctx.check("matches_reference", ok, detail)


def _error_cause(error: str) -> str:
    """What a GradScaler error says about the code, in words."""
    if "_scale is None" in error or "did not use scaler.scale" in error:
        return (
            "the loss was never scaled: the scaler was asked to step or unscale without "
            "scaler.scale(loss) before the backward"
        )
    if "No inf checks were recorded" in error:
        return "scaler.update() ran with no scaler.step(optimizer) or scaler.unscale_ before it"
    if "since the last update()" in error:
        return "scaler.update() is not called after scaler.step(optimizer), so the next step fails"
    if "unscale_() has already been called" in error:
        return "scaler.unscale_(optimizer) is called twice in one step"
    return "the step raised (see the error)"

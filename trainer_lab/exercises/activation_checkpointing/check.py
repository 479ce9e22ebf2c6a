"""activation-checkpointing: count the bytes autograd saves during forward (saved-tensor hooks),
count the block's forward calls, compare gradients with the plain block. The block draws random
numbers (dropout, in training mode), both forwards start from the same RNG seed, so a
recomputation that does not replay the forward's RNG state draws other masks and its gradients
differ; the same block in eval mode (no dropout) tells that cause from the others."""

import contextlib

import torch
from torch import nn

from trainer_lab.exercises._checker.ctx import Ctx


def block() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Dropout(0.25), nn.Linear(256, 256),
                         nn.GELU(), nn.Dropout(0.25), nn.Linear(256, 64))  # fmt: skip


SEED = 1234


def _grads_match(
    ctx: Ctx, cls: type, x: torch.Tensor, train: bool, input_grad: bool = True
) -> list[str]:
    """Problems with the wrapped block's gradients against the plain one's (same RNG seed);
    with input_grad False the input does not require grad (raw data into a first block)."""
    plain, inner = block().train(train), block().train(train)
    wrapped = ctx.call(cls, inner)
    x1, x2 = x.clone().requires_grad_(input_grad), x.clone().requires_grad_(input_grad)
    torch.manual_seed(SEED)
    plain(x1).square().sum().backward()
    torch.manual_seed(SEED)
    out = ctx.call(wrapped, x2)
    try:
        out.square().sum().backward()
    except RuntimeError as e:
        return [f"backward failed: {str(e).splitlines()[0]}"]
    problems = []
    if input_grad and (x2.grad is None or not torch.allclose(x2.grad, x1.grad, atol=1e-6)):
        problems.append("the input's gradient differs from the plain block's (or is missing)")
    for (name, p), q in zip(inner.named_parameters(), plain.parameters(), strict=True):
        if p.grad is None or not torch.allclose(p.grad, q.grad, atol=1e-6):
            problems.append(f"gradient of {name} differs from the plain block's (or is missing)")
            break
    return problems


def measure(module: nn.Module, x: torch.Tensor) -> tuple[int, torch.Tensor]:
    saved = [0]

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = module(x)
    return saved[0], out


def run(ctx: Ctx) -> None:
    cls = ctx.attr("CheckpointedBlock")
    x = torch.randn(32, 64)
    plain = block()
    x1 = x.clone().requires_grad_()
    torch.manual_seed(SEED)
    plain_bytes, _ = measure(plain, x1)
    inner = block()
    calls = [0]
    inner.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    wrapped = ctx.call(cls, inner)
    x2 = x.clone().requires_grad_()
    torch.manual_seed(SEED)
    mine_bytes, out2 = ctx.call(measure, wrapped, x2)
    forward_calls = calls[0]
    with contextlib.suppress(RuntimeError):  # _grads_match says so
        out2.square().sum().backward()
    problems = _grads_match(ctx, cls, x, train=True)
    detail = "; ".join(problems) or "input and weights match, dropout included"
    if problems and not _grads_match(ctx, cls, x, train=False):
        detail += (
            "; expected the plain block's gradients (they match with dropout off, in eval "
            "mode). Likely cause: the recomputation in backward draws other dropout masks than "
            "the forward did: the RNG state at forward is not restored for the rerun "
            "(torch.get_rng_state / set_rng_state, or checkpoint's preserve_rng_state)"
        )
    elif problems:
        detail += (
            "; expected the plain block's gradients. Likely cause: the block runs without "
            "autograd (under no_grad, or on a detached input) so no gradient reaches it"
        )
    if not problems:
        problems = _grads_match(ctx, cls, x, train=True, input_grad=False)
        if problems:
            detail = (
                f"with an input that requires grad the gradients match, but with one that does "
                f"not (raw data into a first block): {'; '.join(problems)}; expected the "
                "plain block's parameter gradients. Likely cause: a reentrant checkpoint "
                "(use_reentrant=True, or a Function without a path for the parameters): when "
                "no input requires grad its output does not either, so the block's parameters "
                "silently get no gradient; use checkpoint(..., use_reentrant=False)"
            )
    ctx.check("same_gradients", not problems, detail)
    input_bytes = x.numel() * x.element_size()
    ok = mine_bytes <= 2 * input_bytes and not problems
    ctx.check("saves_less", ok,
              f"saved for backward: {mine_bytes} bytes, plain block {plain_bytes}, the input "
              f"alone {input_bytes}" + ("" if mine_bytes <= 2 * input_bytes else
              f"; expected at most {2 * input_bytes}. Likely cause: the block's intermediate "
              "activations are still stored (its forward runs with autograd saving them)")
              + ("" if not problems or mine_bytes > 2 * input_bytes else
              "; not counted: the gradients are wrong (see same_gradients)"))  # fmt: skip
    recomputed = calls[0] - forward_calls
    ctx.check(
        "recomputes",
        recomputed >= 1,
        f"block forward calls: {forward_calls} in forward, {recomputed} in backward"
        + (
            ""
            if recomputed >= 1
            else "; expected at least 1 in backward. Likely cause: the block is not rerun in "
            "backward (its activations are kept, or no gradient reaches it)"
        ),
    )

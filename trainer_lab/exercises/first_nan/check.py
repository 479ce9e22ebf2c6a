"""first-nan: models whose chosen module produces inf (a huge weight or factor) or NaN (log of a
negative); later modules then see non-finite inputs too, so only the first counts. "First" is
in execution order: one block defines its modules in another order than it calls them, and one
module computes the inf in its own forward, after its (finite) child.

Leftover hooks are seen by behaviour: after first_bad_module returns, a forward and backward
pass of the model it was given, and a forward pass of a fresh model, must run none of the code
in the user's file (a hook left on a module, a global module hook, a patched forward ...); so
must the passes after a call whose forward raised (hooks removed only when forward returns)."""

import contextlib
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch import nn

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError


class Log(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


class Residual(nn.Module):
    """Defines `out` before `inner` but calls `inner` first (named_modules order is not the
    order outputs are produced)."""

    def __init__(self) -> None:
        super().__init__()
        self.out = nn.Linear(16, 16)
        self.inner = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.out(self.inner(x))


class Scale(nn.Module):
    """Computes in its own forward after its child: with a huge factor it is the first module
    whose output is not finite, though its child's output is."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.factor = 0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) * self.factor


def model(broken: str | None) -> nn.Module:
    torch.manual_seed(0)
    m = nn.Sequential()
    m.add_module("embed", nn.Linear(8, 16))
    m.add_module("block", nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16)))
    m.add_module("res", Residual())
    m.add_module("scale", Scale())
    m.add_module("norm", nn.LayerNorm(16))
    m.add_module("head", nn.Linear(16, 4))
    with torch.no_grad():
        if broken == "block.2":
            m.block[2].weight.fill_(3e38)
        if broken == "res.inner":
            m.res.inner.weight.fill_(3e38)
        if broken == "scale":
            m.scale.factor = 1e39
        if broken == "norm":
            m.norm = nn.Sequential(Log(), nn.LayerNorm(16))  # log of negatives: NaN
    return m


# (module made non-finite, the name first_bad_module must return)
BROKEN = (
    ("block.2", "block.2"),
    ("res.inner", "res.inner"),
    ("scale", "scale"),
    ("norm", "norm.0"),
)


class UserCalls:
    """Counts calls of functions defined in the user's file while active (sys.setprofile)."""

    def __init__(self, user_file: Path) -> None:
        self.file = str(user_file.resolve())
        self.seen: dict[str, int] = {}

    def _profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == self.file:
            where = f"{frame.f_code.co_name} ({Path(self.file).name}:{frame.f_code.co_firstlineno})"
            self.seen[where] = self.seen.get(where, 0) + 1

    def __enter__(self) -> "UserCalls":
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)


def _left_behind(ctx: Ctx, m: nn.Module, x: torch.Tensor) -> dict[str, int]:
    """Calls of the user's code in passes run after first_bad_module returned."""
    with UserCalls(ctx.user_file) as calls:
        try:
            m(x).sum().backward()
            with torch.no_grad():
                model(None)(x)
        except Exception:
            pass  # a leftover hook that raises is still a leftover hook: it was counted
    return calls.seen


def _hook_attrs(m: nn.Module) -> int:
    names = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
    return sum(len(getattr(s, n, {})) for s in m.modules() for n in names)


def _first_output(broken: str, x: torch.Tensor, test: Any) -> str | None:
    """The first module (execution order) of model(broken) whose output `test` flags."""
    m = model(broken)
    found: list[str] = []

    def hook(name: str) -> Any:
        def seen(_module: nn.Module, _inputs: Any, output: Any) -> None:
            if not found and torch.is_tensor(output) and bool(test(output)):
                found.append(name)

        return seen

    handles = [sub.register_forward_hook(hook(n)) for n, sub in m.named_modules()]
    try:
        with torch.no_grad():
            m(x)
    finally:
        for h in handles:
            h.remove()
    return found[0] if found else None


def _cause(got: Any, expected: str, answers: dict[str, Any], x: torch.Tensor) -> str:
    """Why `got` was returned for `expected`; `answers` holds what came back for every broken
    model (a NaN-only or inf-only test is named only when it explains all of them)."""
    firsts = {
        kind: {b: _first_output(b, x, test) for b, _ in BROKEN}
        for kind, test in (("NaN", lambda t: torch.isnan(t).any()),
                           ("inf", lambda t: torch.isinf(t).any()))
    }  # fmt: skip
    for kind, other in (("NaN", "inf"), ("inf", "NaN")):
        if all(answers[b] == firsts[kind][b] for b, _ in BROKEN):
            test = "torch.isnan" if kind == "NaN" else "torch.isinf"
            return (
                f"every answer is the first module whose output held {kind}, though an "
                f"earlier one held {other} (e.g. the output of {expected!r}): only {kind} is "
                f"tested ({test}); test torch.isfinite, which flags NaN and inf"
            )
    if got is None:
        broken = dict((e, b) for b, e in BROKEN)[expected]
        held = "inf" if firsts["inf"][broken] == expected else "NaN"
        return (
            f"no module's output was seen as non-finite, though the output of {expected!r} held "
            f"{held}: "
            "the test misses a kind of non-finite value (torch.isnan sees only NaN, "
            "torch.isinf only inf; torch.isfinite sees both), or looks somewhere other than "
            "the modules' outputs (the weights: here they are finite, a module's own "
            "computation overflows)"
        )
    if isinstance(got, str) and got.startswith("<raised "):
        return f"first_bad_module raised instead of returning a name: {got[8:-1]}"
    if not isinstance(got, str):
        return f"a module name is a str as in named_modules, not {type(got).__name__}"
    if got == "":
        return (
            "'' is the whole model (the root of named_modules): its output is not finite only "
            "because an inner module's is"
        )
    if expected.startswith(got + "."):
        return f"{got!r} contains {expected!r}: a container's hook fires after its children's"
    if got.startswith(expected + "."):
        return f"{got!r} is a child of {expected!r}, whose own forward made the output non-finite"
    return (
        f"{got!r} only saw non-finite inputs: the outputs are ranked in named_modules order "
        "(or only leaves are checked), not in the order they are produced"
    )


def _wrong_names(wrong: list[tuple[Any, str]], answers: dict[str, Any], x: torch.Tensor) -> str:
    shown = "; ".join(
        f"returned {got!r}; the first non-finite output came from {expected!r}"
        for got, expected in wrong[:2]
    )
    got, expected = wrong[0]
    cause = _cause(got, expected, answers, x)
    return (
        f"{shown} ({len(wrong)} of {len(BROKEN)} broken models wrong). Expected the first module "
        f"in execution order whose own output is not finite. Likely cause: {cause}"
    )


def run(ctx: Ctx) -> None:
    fn = ctx.attr("first_bad_module")
    x = torch.randn(4, 8)
    wrong: list[tuple[Any, str]] = []
    answers: dict[str, Any] = {}
    leftover: dict[str, int] = {}
    on_model = 0
    for broken, expected in BROKEN:
        m = model(broken)
        try:
            got = ctx.call(fn, m, x)
        except UserCodeError as e:
            got = f"<raised {e}>"
        on_model += _hook_attrs(m)
        for where, n in _left_behind(ctx, m, x).items():
            leftover[where] = leftover.get(where, 0) + n
        answers[broken] = got
        if got != expected:
            wrong.append((got, expected))
    names = ", ".join(e for _, e in BROKEN)
    ctx.check(
        "names_the_first", not wrong, _wrong_names(wrong, answers, x) if wrong else f"named {names}"
    )
    m = model(None)
    got = ctx.call(fn, m, x)
    on_model += _hook_attrs(m)
    for where, n in _left_behind(ctx, m, x).items():
        leftover[where] = leftover.get(where, 0) + n
    ctx.check("clean_is_none", got is None, f"returned {got!r} for a model with finite outputs"
              + ("" if got is None else "; expected None"))  # fmt: skip
    raising = model(None)
    raising.head = nn.Linear(32, 4)  # a shape mismatch: forward raises after the first hooks ran
    with contextlib.suppress(UserCodeError):
        ctx.call(fn, raising, x)
    raising.head = nn.Linear(16, 4)  # fixed: a later pass runs the whole model again
    after_raise = _left_behind(ctx, raising, x)
    if leftover:
        runs = ", ".join(f"{w} {n} times" for w, n in sorted(leftover.items()))
        where = (
            f"{on_model} hook(s) left on the models' modules"
            if on_model
            else "no hook is left on the models' own modules, so a global hook "
            "(torch.nn.modules.module.register_module_forward_hook ...) or a patched forward"
        )
        detail = (
            f"after first_bad_module returned, later forward/backward passes (of the model it "
            f"was given and of a fresh model) still ran code from {ctx.user_file.name}: {runs}; "
            f"expected none. Likely cause: {where} was never removed (remove every handle, "
            "in a finally block)"
        )
    elif after_raise:
        runs = ", ".join(f"{w} {n} times" for w, n in sorted(after_raise.items()))
        detail = (
            f"hooks are removed after a forward that returns, but not after one that raises: "
            f"a model whose forward raised (a shape mismatch in its head) still ran code from "
            f"{ctx.user_file.name} in later passes: {runs}; expected none. Likely cause: the "
            "handles are removed after the forward, not in a finally block (or an ExitStack), "
            "so an exception skips the removal"
        )
    else:
        detail = (
            "later forward/backward passes run none of the code in the user's file, also "
            "after a forward that raised"
        )
    ctx.check("hooks_removed", not leftover and not after_raise, detail)

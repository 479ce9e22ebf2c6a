"""first-nan: models whose chosen module produces inf (a huge weight) or NaN (log of a negative);
later modules then see non-finite inputs too, so only the first counts."""

import torch
from torch import nn

from trainer_lab.exercises._checker.ctx import Ctx, UserCodeError


class Log(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


def model(broken: str | None) -> nn.Module:
    torch.manual_seed(0)
    m = nn.Sequential()
    m.add_module("embed", nn.Linear(8, 16))
    m.add_module("block", nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16)))
    m.add_module("norm", nn.LayerNorm(16))
    m.add_module("head", nn.Linear(16, 4))
    with torch.no_grad():
        if broken == "block.2":
            m.block[2].weight.fill_(3e38)
        if broken == "norm":
            m.norm = nn.Sequential(Log(), nn.LayerNorm(16))  # log of negatives: NaN
    return m


def _hooks(m: nn.Module) -> int:
    return sum(len(s._forward_hooks) + len(s._forward_pre_hooks) for s in m.modules())


def run(ctx: Ctx) -> None:
    fn = ctx.attr("first_bad_module")
    x = torch.randn(4, 8)
    wrong, hooks = [], 0
    for broken, expected in (("block.2", "block.2"), ("norm", "norm.0")):
        m = model(broken)
        try:
            got = ctx.call(fn, m, x)
        except UserCodeError as e:
            got = f"<raised {e}>"
        hooks += _hooks(m)
        if got != expected:
            wrong.append(f"returned {got!r}; the first non-finite output came from {expected!r}")
    ctx.check("names_the_first", not wrong, "; ".join(wrong) or "named block.2 and norm.0")
    m = model(None)
    got = ctx.call(fn, m, x)
    hooks += _hooks(m)
    ctx.check("clean_is_none", got is None, f"returned {got!r} for a model with finite outputs")
    ctx.check("hooks_removed", hooks == 0,
              f"{hooks} hook(s) left on the models afterwards" + (": remove the handles" if hooks
              else ""))  # fmt: skip

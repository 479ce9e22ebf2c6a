"""full-state-checkpoint: one process; AdamW, a StepLR stepped every step, dropout in the model
and python random in the loop. The run stops after step K, saves, and a "restarted" run (other
seeds, freshly built objects) loads and goes on; the reference never stops. Before the next step
both runs draw a few numbers from torch and python random and put the states back, so the peek
changes nothing."""

import random

import torch
from torch import nn

from trainer_lab.exercises._checker.ctx import Ctx
from trainer_lab.exercises._checker.kit import batches

STEPS, K = 8, 4
DATA = batches(7, STEPS)


def _build() -> tuple[nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    return model, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


def _seed(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)


def _train(model, opt, sched, steps: range) -> tuple[list[float], list[float]]:
    losses, lrs = [], []
    for step in steps:
        x, y = DATA[step]
        x = x + 0.1 * random.gauss(0.0, 1.0)  # python random in the loop
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses, lrs


def _peek() -> list[float]:
    t, p = torch.get_rng_state(), random.getstate()
    draws = torch.rand(3).tolist() + [random.random() for _ in range(3)]
    torch.set_rng_state(t)
    random.setstate(p)
    return draws


def _opt_state(opt: torch.optim.Optimizer) -> dict[int, dict[str, torch.Tensor]]:
    return {i: {k: torch.as_tensor(v).clone() for k, v in s.items()}
            for i, s in opt.state_dict()["state"].items()}  # fmt: skip


def run(ctx: Ctx) -> None:
    save, load = ctx.attr("save"), ctx.attr("load")
    _seed(1)
    model, opt, sched = _build()
    ref_losses, ref_lrs = _train(model, opt, sched, range(STEPS))

    _seed(1)
    model, opt, sched = _build()
    _train(model, opt, sched, range(K))
    ref_draws = _peek()
    saved_opt, saved_lr = _opt_state(opt), sched.get_last_lr()
    path = str(ctx.scratch / "ckpt.pt")
    ctx.call(save, path, model, opt, sched)
    del model, opt, sched  # the restart: fresh objects, another seed
    _seed(12345)
    model, opt, sched = _build()
    ctx.call(load, path, model, opt, sched)
    loaded_opt, loaded_lr = _opt_state(opt), sched.get_last_lr()
    draws = _peek()
    losses, lrs = _train(model, opt, sched, range(K, STEPS))

    first = next((s for s in range(K, STEPS) if losses[s - K] != ref_losses[s]), None)
    if first is None:
        detail = f"steps {K}-{STEPS - 1} after the resume have the uninterrupted run's losses"
    elif first == K:
        detail = (f"the first step after the resume (step {K}) already differs: loss "
                  f"{losses[0]:.6f} vs {ref_losses[K]:.6f}; the forward pass itself changed "
                  "(weights, or the dropout masks: RNG state)")  # fmt: skip
    else:
        detail = (
            f"step {K} matches, step {first} differs: loss {losses[first - K]:.6f} vs "
            f"{ref_losses[first]:.6f}; the update changed (optimizer state or LR)"
        )
    ctx.check("losses_match", first is None, detail)

    same = saved_opt.keys() == loaded_opt.keys() and all(
        saved_opt[i].keys() == loaded_opt[i].keys()
        and all(torch.equal(saved_opt[i][k], loaded_opt[i][k]) for k in saved_opt[i])
        for i in saved_opt
    )
    ctx.check(
        "optimizer_state",
        same,
        "the Adam moments and step count are those at save"
        if same
        else f"after load the optimizer holds state for {len(loaded_opt)} of {len(saved_opt)} "
        "parameters"
        + (" (Adam's moments are gone)" if not loaded_opt else ", not the saved values"),
    )
    lr_ok = loaded_lr == saved_lr and lrs == ref_lrs[K:]
    ctx.check(
        "lr_continues",
        lr_ok,
        f"LR after load {loaded_lr[0]:g}, at save {saved_lr[0]:g}; LRs after the resume {lrs}, "
        f"uninterrupted {ref_lrs[K:]}" + ("" if lr_ok else " (the schedule restarted)"),
    )
    rng_ok = draws == ref_draws
    ctx.check(
        "rng_continues",
        rng_ok,
        "torch and python random continue where the run stopped"
        if rng_ok
        else "after load torch.rand / random.random draw "
        f"{[round(d, 4) for d in draws]}, the uninterrupted run drew "
        f"{[round(d, 4) for d in ref_draws]} (new dropout masks: restore the RNG states)",
    )

"""full-state-checkpoint: one process; AdamW, a StepLR stepped every step, fp16 autocast with a
GradScaler, dropout in the model, python random in the loop, and batches from a DataLoader whose
shuffling sampler keeps its position (epoch and samples handed out). The run stops mid-epoch
after step K, saves, and a "restarted" run (other seeds, freshly built objects) loads and goes
on; the reference never stops. The dataset records the ids each step fetched. Before the next
step both runs draw a few numbers from torch and python random and put the states back, so the
peek changes nothing.

The scaler's scale grows every GROWTH_INTERVAL steps until the scaled gradients overflow fp16 (the
step is skipped and the scale halves); a scaler that restarts from INIT_SCALE skips other steps
than the uninterrupted run, so a lost scaler state shows in the losses a few steps later."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler

from trainer_lab.exercises._checker.ctx import Ctx
from trainer_lab.exercises._checker.kit import flat

# 6 batches an epoch: the save is mid-epoch 0. K is not a multiple of the StepLR's step_size
# (2): a scheduler that restarts from 0 then halves the LR at other steps than the run did.
N, BATCH, STEPS, K = 48, 8, 10, 5
LR_STEP_SIZE = 2
INIT_SCALE, GROWTH_INTERVAL = 2.0**15, 3


class Recorded(Dataset):
    """N fixed samples; remembers which ids were fetched."""

    def __init__(self) -> None:
        g = torch.Generator().manual_seed(7)
        self.x, self.y = torch.randn(N, 16, generator=g), torch.randn(N, 1, generator=g)
        self.fetched: list[int] = []

    def __len__(self) -> int:
        return N

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        self.fetched.append(int(i))
        return self.x[i], self.y[i]


class ResumableSampler(Sampler[int]):
    """Shuffles by (seed, epoch) with its own generator and counts the indices it handed out;
    state_dict() / load_state_dict() carry the epoch and that position."""

    def __init__(self, size: int, seed: int = 0) -> None:
        self.size, self.seed = size, seed
        self.epoch, self.position = 0, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch, self.position = epoch, 0

    def __iter__(self) -> Iterator[int]:
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        order = torch.randperm(self.size, generator=g).tolist()
        while self.position < self.size:
            self.position += 1
            yield order[self.position - 1]

    def __len__(self) -> int:
        return self.size - self.position

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.epoch, self.position = int(state["epoch"]), int(state["position"])


Objects = tuple[
    nn.Module,
    torch.optim.Optimizer,
    torch.optim.lr_scheduler.LRScheduler,
    torch.amp.GradScaler,
    ResumableSampler,
]


@dataclass
class Run:
    losses: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)
    scales: list[float] = field(default_factory=list)
    ids: list[list[int]] = field(default_factory=list)


def _build() -> Objects:
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=LR_STEP_SIZE, gamma=0.5)
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE, growth_interval=GROWTH_INTERVAL)
    return model, opt, sched, scaler, ResumableSampler(N)


def _seed(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)


def _train(objects: Objects, data: Recorded, steps: range) -> Run:
    model, opt, sched, scaler, sampler = objects
    # its own generator: otherwise each new iterator draws its seed from the global RNG and
    # shifts the dropout masks of a resumed run (a checker artefact, not the user's fault)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler, generator=torch.Generator())
    batches, run = iter(loader), Run()
    for _ in steps:
        data.fetched.clear()
        batch = next(batches, None)
        if batch is None:  # the epoch is over
            sampler.set_epoch(sampler.epoch + 1)
            batches = iter(loader)
            batch = next(batches)
        x, y = batch
        x = x + 0.1 * random.gauss(0.0, 1.0)  # python random in the loop
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        run.lrs.append(opt.param_groups[0]["lr"])
        scaler.step(opt)
        scaler.update()
        sched.step()
        run.losses.append(loss.item())
        run.scales.append(scaler.get_scale())
        run.ids.append(list(data.fetched))
    return run


def _peek() -> list[float]:
    t, p = torch.get_rng_state(), random.getstate()
    draws = torch.rand(3).tolist() + [random.random() for _ in range(3)]
    torch.set_rng_state(t)
    random.setstate(p)
    return draws


def _opt_state(opt: torch.optim.Optimizer) -> dict[int, dict[str, torch.Tensor]]:
    return {i: {k: torch.as_tensor(v).clone() for k, v in s.items()}
            for i, s in opt.state_dict()["state"].items()}  # fmt: skip


def _scaler_state(scaler: torch.amp.GradScaler) -> tuple[float, int]:
    return scaler.get_scale(), int(scaler.state_dict().get("_growth_tracker", 0))


@dataclass
class Snapshot:
    """What the next step reads, taken right after step K-1 (at save) or right after load."""

    weights: list[float]
    opt: dict[int, dict[str, torch.Tensor]]
    lr: list[float]
    scaler: tuple[float, int]
    sampler: dict[str, int]
    draws: list[float]


def _snapshot(objects: Objects) -> Snapshot:
    model, opt, sched, scaler, sampler = objects
    return Snapshot(
        flat(model),
        _opt_state(opt),
        sched.get_last_lr(),
        _scaler_state(scaler),
        sampler.state_dict(),
        _peek(),
    )


def _same_opt(a: dict[int, dict[str, torch.Tensor]], b: dict[int, dict[str, torch.Tensor]]) -> bool:
    return a.keys() == b.keys() and all(
        a[i].keys() == b[i].keys() and all(torch.equal(a[i][k], b[i][k]) for k in a[i]) for i in a
    )


def _not_restored(saved: Snapshot, loaded: Snapshot) -> list[str]:
    return [
        what
        for what, same in (
            ("the weights", saved.weights == loaded.weights),
            ("the Adam moments (optimizer)", _same_opt(saved.opt, loaded.opt)),
            ("the LR (scheduler)", saved.lr == loaded.lr),
            ("the loss scale (GradScaler)", saved.scaler == loaded.scaler),
            ("the batches' ids (sampler position)", saved.sampler == loaded.sampler),
            ("the dropout masks (RNG state)", saved.draws == loaded.draws),
        )
        if not same
    ]


def _sampler_detail(ref: Run, resumed: Run, ok: bool) -> str:
    rest = [i for ids in ref.ids[K : N // BATCH] for i in ids]  # what epoch 0 still held
    if ok:
        return (f"after the resume the batches fetched the uninterrupted run's ids: the other "
                f"{len(rest)} of epoch 0, then epoch 1")  # fmt: skip
    before = {i for ids in ref.ids[:K] for i in ids}
    got = [i for ids in resumed.ids for i in ids][: len(rest)]
    detail = (f"the first batch after the resume fetched ids {resumed.ids[0]}, the "
              f"uninterrupted run's fetched {ref.ids[K]}")  # fmt: skip
    if got == [i for ids in ref.ids for i in ids][: len(got)]:
        return detail + (f": it fetched the first {len(got)} ids of epoch 0 again instead of "
                         f"the {len(rest)} left (the sampler started the epoch over)")  # fmt: skip
    again = sorted(before & set(got))
    skipped = sorted(set(rest) - set(got))
    if again:
        detail += f"; {len(again)} ids already fetched came again, e.g. {again[:4]} (replayed)"
    if skipped:
        detail += (f"; {len(skipped)} of the {len(rest)} ids left in the epoch were not fetched, "
                   f"e.g. {skipped[:4]} (skipped)")  # fmt: skip
    return detail


def run(ctx: Ctx) -> None:
    save, load = ctx.attr("save"), ctx.attr("load")
    _seed(1)
    data = Recorded()
    ref = _train(_build(), data, range(STEPS))

    _seed(1)
    objects = _build()
    _train(objects, data, range(K))
    saved = _snapshot(objects)
    path = str(ctx.scratch / "ckpt.pt")
    ctx.call(save, path, *objects)
    del objects  # the restart: fresh objects, another seed
    _seed(12345)
    objects = _build()
    ctx.call(load, path, *objects)
    loaded = _snapshot(objects)
    resumed = _train(objects, data, range(K, STEPS))

    diff = next((s for s in range(K, STEPS) if resumed.losses[s - K] != ref.losses[s]), None)
    missing = _not_restored(saved, loaded)
    if diff is None:
        detail = f"steps {K}-{STEPS - 1} after the resume have the uninterrupted run's losses"
    else:
        detail = (f"the first step after the resume (step {K}) already differs"
                  if diff == K else f"step {K} matches, step {diff} differs")  # fmt: skip
        detail += f": loss {resumed.losses[diff - K]:.6f} vs {ref.losses[diff]:.6f}"
        if missing:
            detail += "; after the load these are not what they were at the save: "
            detail += ", ".join(missing)
    ctx.check("losses_match", diff is None, detail)

    same = _same_opt(saved.opt, loaded.opt)
    ctx.check(
        "optimizer_state",
        same,
        "the Adam moments and step count are those at save"
        if same
        else f"after load the optimizer holds state for {len(loaded.opt)} of {len(saved.opt)} "
        "parameters"
        + (" (no moments, no step count)" if not loaded.opt else ", not the saved values")
        + "; expected the saved moments and step count. Likely cause: the optimizer's "
        "state_dict is not saved or not loaded (or loaded into another optimizer)",
    )
    lr_ok = loaded.lr == saved.lr and resumed.lrs == ref.lrs[K:]
    detail = (
        f"LR after load {loaded.lr[0]:g}, at save {saved.lr[0]:g}; LRs after the resume "
        f"{resumed.lrs}, uninterrupted {ref.lrs[K:]}"
    )
    if not lr_ok:
        detail += (
            "; expected the same LR at load and the same LRs after. Likely cause: the "
            "scheduler's state (its step count) is not restored, so the schedule restarted "
            "from step 0"
            if loaded.lr != saved.lr
            else "; expected the same LRs after the resume. Likely cause: the scheduler's "
            "state is restored, but the schedule goes on differently (another scheduler's "
            "state, or the scheduler is stepped at load)"
        )
    ctx.check("lr_continues", lr_ok, detail)
    # the scale's course after the resume follows the losses: when something else was lost,
    # a different course is that thing's doing, not the scaler's
    others_lost = [m for m in missing if "GradScaler" not in m]
    scale_ok = loaded.scaler == saved.scaler and (
        resumed.scales == ref.scales[K:] or bool(others_lost)
    )
    detail = (
        f"scale and growth tracker after load {loaded.scaler}, at save {saved.scaler}; scale "
        f"after each step of the resume {resumed.scales}, uninterrupted {ref.scales[K:]}"
    )
    if scale_ok and resumed.scales != ref.scales[K:]:
        detail += f" (the course differs because of what else was lost: {', '.join(others_lost)})"
    if not scale_ok:
        cause = (
            "the GradScaler's state is not restored: it started over from its initial scale"
            if loaded.scaler[0] == INIT_SCALE and saved.scaler[0] != INIT_SCALE
            else "part of the GradScaler's state is lost (the growth tracker counts the "
            "steps since the scale last grew; scaler.state_dict() carries both)"
        )
        detail += f"; expected the same. Likely cause: {cause}, so other steps are skipped"
    ctx.check("scaler_continues", scale_ok, detail)
    ids_ok = resumed.ids == ref.ids[K:]
    ctx.check("sampler_resumes", ids_ok, _sampler_detail(ref, resumed, ids_ok))
    rng_ok = loaded.draws == saved.draws
    ctx.check(
        "rng_continues",
        rng_ok,
        "torch and python random continue where the run stopped"
        if rng_ok
        else "after load torch.rand / random.random draw "
        f"{[round(d, 4) for d in loaded.draws]}, the uninterrupted run drew "
        f"{[round(d, 4) for d in saved.draws]}; expected the same draws. Likely cause: the "
        "RNG states are not restored, or something draws random numbers after they are "
        "(new dropout masks)",
    )

# WRONG (class: GradScaler state forgotten). Everything else is saved and restored (including both
# RNGs), but the fresh GradScaler restarts at its initial scale and growth tracker: the scaled fp16
# gradients (and which steps get skipped / when the scale grows) differ from the uninterrupted run.
# A good checker must FAIL (not bit-exact).
# Modern style: zip over parallel name/object tuples.
import random

import torch

_NAMES = ("model", "optimizer", "scheduler", "sampler")


def save(path, model, optimizer, scheduler, scaler, sampler) -> None:
    objs = (model, optimizer, scheduler, sampler)
    state = {n: o.state_dict() for n, o in zip(_NAMES, objs)}
    state |= {"torch_rng": torch.get_rng_state(), "py_rng": random.getstate()}
    torch.save(state, path)


def load(path, model, optimizer, scheduler, scaler, sampler) -> None:
    state = torch.load(path, weights_only=False)
    for n, o in zip(_NAMES, (model, optimizer, scheduler, sampler)):
        o.load_state_dict(state[n])
    torch.set_rng_state(state["torch_rng"])
    random.setstate(state["py_rng"])

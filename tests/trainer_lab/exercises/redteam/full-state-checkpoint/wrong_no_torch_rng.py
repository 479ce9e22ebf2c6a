# WRONG (class: RNG not restored -- torch's generator). Saves model/optimizer/scheduler/scaler/
# sampler and python's random state, but not torch's CPU RNG: after the restart (a reseeded
# process) dropout masks differ from the uninterrupted run, so the losses diverge from step K+1.
# A good checker must FAIL (losses not bit-exact).
# Modern style: dict comprehension over named objects.
import random

import torch


def save(path, model, optimizer, scheduler, scaler, sampler) -> None:
    objs = dict(model=model, optimizer=optimizer, scheduler=scheduler, scaler=scaler, sampler=sampler)
    state = {k: o.state_dict() for k, o in objs.items()}
    state["python_random"] = random.getstate()
    torch.save(state, path)


def load(path, model, optimizer, scheduler, scaler, sampler) -> None:
    state = torch.load(path, weights_only=False)
    objs = dict(model=model, optimizer=optimizer, scheduler=scheduler, scaler=scaler, sampler=sampler)
    for k, o in objs.items():
        o.load_state_dict(state[k])
    random.setstate(state["python_random"])

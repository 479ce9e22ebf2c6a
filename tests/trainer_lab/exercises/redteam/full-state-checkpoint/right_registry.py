# RIGHT. A registry of (name -> (getter, setter)) pairs: the stateful objects' state_dict /
# load_state_dict plus torch's and python's RNG. One loop saves, one loop restores, in order.
# Modern style: table-driven with functools.partial + operator.methodcaller.
import functools
import operator
import random

import torch


def _table(model, optimizer, scheduler, scaler, sampler):
    objs = {"model": model, "optim": optimizer, "sched": scheduler, "scaler": scaler, "sampler": sampler}
    table = {
        k: (operator.methodcaller("state_dict"), functools.partial(lambda o, s: o.load_state_dict(s)))
        for k in objs
    }
    get = {k: functools.partial(table[k][0], o) for k, o in objs.items()}
    put = {k: functools.partial(table[k][1], o) for k, o in objs.items()}
    get["py_random"], put["py_random"] = random.getstate, random.setstate
    get["torch_rng"], put["torch_rng"] = torch.get_rng_state, torch.set_rng_state
    return get, put


def save(path, model, optimizer, scheduler, scaler, sampler) -> None:
    get, _ = _table(model, optimizer, scheduler, scaler, sampler)
    torch.save({k: g() for k, g in get.items()}, path)


def load(path, model, optimizer, scheduler, scaler, sampler) -> None:
    _, put = _table(model, optimizer, scheduler, scaler, sampler)
    state = torch.load(path, weights_only=False)
    for k, p in put.items():
        p(state[k])

# WRONG (class: data position lost). Saves model/optimizer/scheduler/scaler and both RNGs, but not
# the sampler's position: the resumed run starts the epoch over and replays the batches already
# seen. A good checker must FAIL (different batches after resume).
# Modern style: ChainMap-free dict merge with |.
import random

import torch


def save(path, model, optimizer, scheduler, scaler, sampler) -> None:
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
         "scaler": scaler.state_dict()} | {"torch_rng": torch.get_rng_state(), "py_rng": random.getstate()},
        path,
    )


def load(path, model, optimizer, scheduler, scaler, sampler) -> None:
    s = torch.load(path, weights_only=False)
    model.load_state_dict(s["model"])
    optimizer.load_state_dict(s["optimizer"])
    scheduler.load_state_dict(s["scheduler"])
    scaler.load_state_dict(s["scaler"])
    torch.set_rng_state(s["torch_rng"])
    random.setstate(s["py_rng"])

"""Wrong: everything but the GradScaler's state is saved (the scale starts over after a resume)."""

import random

import torch


def save(path, model, optimizer, scheduler, scaler, sampler):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    state |= {"scheduler": scheduler.state_dict(), "sampler": sampler.state_dict()}
    torch.save(state | {"rng": (torch.get_rng_state(), random.getstate())}, path)


def load(path, model, optimizer, scheduler, scaler, sampler):
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    sampler.load_state_dict(state["sampler"])
    torch.set_rng_state(state["rng"][0])
    random.setstate(state["rng"][1])

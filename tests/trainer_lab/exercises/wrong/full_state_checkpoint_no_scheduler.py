"""Wrong: everything but the LR scheduler's state is saved (the schedule restarts after a
resume; the optimizer's own state still carries the LR of the save)."""

import random

import torch


def save(path, model, optimizer, scheduler, scaler, sampler):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    state |= {"scaler": scaler.state_dict(), "sampler": sampler.state_dict()}
    torch.save(state | {"rng": (torch.get_rng_state(), random.getstate())}, path)


def load(path, model, optimizer, scheduler, scaler, sampler):
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scaler.load_state_dict(state["scaler"])
    sampler.load_state_dict(state["sampler"])
    torch.set_rng_state(state["rng"][0])
    random.setstate(state["rng"][1])

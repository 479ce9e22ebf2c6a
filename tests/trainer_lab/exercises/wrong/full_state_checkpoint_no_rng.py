"""Wrong: model, optimizer, scheduler, scaler and sampler are saved, the RNG states are not (new
dropout masks)."""

import torch


def save(path, model, optimizer, scheduler, scaler, sampler):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    state |= {"scheduler": scheduler.state_dict(), "scaler": scaler.state_dict()}
    torch.save(state | {"sampler": sampler.state_dict()}, path)


def load(path, model, optimizer, scheduler, scaler, sampler):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    scaler.load_state_dict(state["scaler"])
    sampler.load_state_dict(state["sampler"])

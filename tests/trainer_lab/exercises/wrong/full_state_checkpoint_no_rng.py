"""Wrong: model, optimizer and scheduler are saved, the RNG states are not (new dropout masks)."""

import torch


def save(path, model, optimizer, scheduler):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state | {"scheduler": scheduler.state_dict()}, path)


def load(path, model, optimizer, scheduler):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])

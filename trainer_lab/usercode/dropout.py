"""Dropout off, for the launches a grading compares step by step with another run that cannot
draw the same masks (the W=3 run and its one-process reference: 3 ranks draw 3 mask streams, one
process one). Every dropout the script can reach acts as the identity, so the comparison is exact
instead of noisy (torch).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

# (module, attribute) of every dropout entry point: nn.Dropout* call F's at call time
ENTRY_POINTS = (
    (F, "dropout"),
    (F, "dropout1d"),
    (F, "dropout2d"),
    (F, "dropout3d"),
    (F, "alpha_dropout"),
    (F, "feature_alpha_dropout"),
    (torch, "dropout"),
    (torch, "alpha_dropout"),
    (torch, "feature_dropout"),
    (torch, "feature_alpha_dropout"),
)


def _identity(input: Any, *args: Any, **kwargs: Any) -> Any:
    return input


def switch_off_dropout() -> None:
    """Make every dropout entry point the identity (before the script imports anything)."""
    for module, name in ENTRY_POINTS:
        if hasattr(module, name):
            setattr(module, name, _identity)

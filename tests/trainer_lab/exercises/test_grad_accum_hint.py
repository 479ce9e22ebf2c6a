"""grad-accum-no-sync's hint says what DDP does: the no_sync flag is read in forward, so an
answer that follows the old hint ("backward inside it skips the all-reduce") with the forward
outside still all-reduces every micro-batch (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.exercises.catalogue import get_exercise
from trainer_lab.exercises.runner import check_exercise

BACKWARD_ONLY = """\
import contextlib

from torch import nn


def accumulate_step(ddp_model, optimizer, micro_batches):
    optimizer.zero_grad()
    k = len(micro_batches)
    for i, (x, y) in enumerate(micro_batches):
        loss = nn.functional.mse_loss(ddp_model(x), y) / k  # forward outside no_sync
        with contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync():
            loss.backward()
    optimizer.step()
"""


def test_the_hint_puts_forward_and_backward_inside_no_sync() -> None:
    hint = next(h for h in get_exercise("grad-accum-no-sync").hints if "no_sync" in h)
    assert "forward and backward inside" in hint
    assert "backward inside it skips" not in hint


@pytest.mark.lab
def test_backward_alone_under_no_sync_still_syncs_every_micro_batch(tmp_path: Path) -> None:
    answer = tmp_path / "accumulate.py"
    answer.write_text(BACKWARD_ONLY)
    result = check_exercise(get_exercise("grad-accum-no-sync"), answer, tmp_path / "out")
    failing = {c["name"]: c["detail"] for c in result["checks"] if not c["passed"]}
    assert set(failing) == {"one_allreduce_per_step"}, failing
    assert "every micro-batch's backward synced" in failing["one_allreduce_per_step"]

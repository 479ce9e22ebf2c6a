"""The fsdp2 stretch's learning check on rank 0's printed losses (hand-written torchrun logs)."""

from __future__ import annotations

import json
from pathlib import Path

from trainer_lab.grading.stretch_fsdp2 import loss_falls
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun


def fsdp2_run(tmp_path: Path, losses: list[float]) -> ScriptRun:
    launch = ScriptLaunch("fsdp-w2", Path("train.py"), (), 2, tmp_path / "w2", tmp_path, 60.0)
    run = ScriptRun(launch, "ok", 0, 1.0)
    out = tmp_path / "w2" / "logs" / "run0" / "attempt_0" / "0" / "stdout.log"  # torchrun's
    out.parent.mkdir(parents=True)
    out.write_text(
        "".join(json.dumps({"step": s, "loss": v}) + "\n" for s, v in enumerate(losses, 1))
    )
    return run


def test_the_fsdp2_stretch_compares_whole_epochs_not_the_first_and_last_steps(tmp_path) -> None:
    """A right answer's printed losses (rank 0, W=2, 6 steps an epoch) in a grading where the
    last four steps drew harder batches than the first four: epoch 2 is lower than epoch 1."""
    seen = [0.911, 0.625, 0.694, 1.16, 1.573, 0.539, 0.267, 0.396, 0.56, 2.483, 0.757, 0.317]
    seen += [1.291, 0.959, 1.042, 0.723]
    ok, text = loss_falls(fsdp2_run(tmp_path / "a", seen), 6)
    assert ok and "loss 0.917 -> 0.7967 (mean over epoch 1 and over epoch 2)" in text, text
    flat = seen[:6] * 2 + seen[:4]  # the same samples' losses again: nothing learned
    ok, text = loss_falls(fsdp2_run(tmp_path / "b", flat), 6)
    assert not ok and "expected it to fall" in text
    ok, text = loss_falls(fsdp2_run(tmp_path / "c", seen[:11]), 6)
    assert not ok and "need two epochs" in text

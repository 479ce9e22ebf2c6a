"""The DDP round's printed losses against the scalars the one-process run's backward passes
began from (hand-written observe dirs): each honest reading fits, a loss scaler's power of two
is allowed per step, and a curve printed beside the training (decayed, smoothed, made up) fits
none of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainer_lab.grading.printed_loss import (
    first_unmatched,
    loss_falls_as_trained,
    one_process_problem,
)
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun

STEPS = 8
LOSS = [0.9 * 0.8**s for s in range(STEPS)]  # the real loss of steps 1..N (mean per sample)
B = 4  # samples read per step


def run_with(tmp_path: Path, scalars: dict[int, list[float]]) -> ScriptRun:
    """A one-process run whose step s read B samples and ran a backward pass from each of
    scalars[s]."""
    observe = tmp_path / "run" / protocol.OBSERVE_DIR
    observe.mkdir(parents=True)
    fetches = [
        {"pstep": s - 1, "id": (s - 1) * B + i} for s in range(1, STEPS + 1) for i in range(B)
    ]
    (observe / protocol.fetch_file(0)).write_text("".join(json.dumps(r) + "\n" for r in fetches))
    losses = [{"pstep": s - 1, "loss": v} for s, values in scalars.items() for v in values]
    (observe / protocol.losses_file(0)).write_text("".join(json.dumps(r) + "\n" for r in losses))
    launch = ScriptLaunch("single", Path("train.py"), (), 0, tmp_path / "run", tmp_path, 60.0)
    return ScriptRun(launch, "ok", 0, 1.0)


def printed(values: list[float]) -> dict[int, float]:
    return {s: round(v, 4) for s, v in enumerate(values, start=1)}


def real() -> dict[int, float]:
    return printed(LOSS)


@pytest.mark.parametrize(
    "scalars",
    [
        {s: [m] for s, m in real().items()},  # loss.backward(), loss printed
        {s: [m / 2, m / 2] for s, m in real().items()},  # two micro-batches of loss / 2
        {s: [m, m] for s, m in real().items()},  # two micro-batches unscaled, their mean printed
        {s: [m * B] for s, m in real().items()},  # reduction="sum", printed per sample
        {s: [0.1, m] for s, m in real().items()},  # the last micro-batch's loss printed
        {s: [m * 2**16 if s < 4 else m * 2**15] for s, m in real().items()},  # a GradScaler
    ],
    ids=["plain", "micro-scaled", "micro-mean", "sum-per-sample", "last", "loss-scaler"],
)
def test_every_honest_reading_of_the_backward_scalars_fits(tmp_path, scalars) -> None:
    run = run_with(tmp_path, scalars)
    assert one_process_problem(run, real(), STEPS) is None


@pytest.mark.parametrize(
    "shown",
    [
        [v * 0.85**s for s, v in enumerate(LOSS, start=1)],  # the real loss, decayed per step
        [sum(LOSS[: s + 1]) / (s + 1) for s in range(STEPS)],  # a running mean
        [1.0 - 0.1 * s for s in range(STEPS)],  # made up
        [v * 1.5 for v in LOSS],  # one constant factor that is not a loss scale
    ],
    ids=["decayed", "running-mean", "made-up", "rescaled"],
)
def test_a_curve_printed_beside_the_training_fails_naming_the_step(tmp_path, shown) -> None:
    run = run_with(tmp_path, {s: [m] for s, m in real().items()})
    why = one_process_problem(run, printed(shown), STEPS)
    assert why is not None and "the printed losses are not the losses trained on" in why
    assert "its backward passes began from (their sum" in why


def test_one_reading_must_fit_every_step(tmp_path) -> None:
    """Step 5 printed as the sum of its three micro-batches, the others as their mean."""
    scalars = {s: [m, m, m] for s, m in real().items()}
    shown = {s: (3 * m if s == 5 else m) for s, m in real().items()}
    why = one_process_problem(run_with(tmp_path, scalars), shown, STEPS)
    assert why is not None and "step 1 printed" in why  # each step fits some reading
    assert first_unmatched({1: 1.0}, {"a": {1: 1.0}, "b": {1: 2.0}}) is None


def test_nothing_recorded_is_no_verdict_and_a_falling_fake_fails_the_check(tmp_path) -> None:
    run = run_with(tmp_path, {})  # torch.autograd.grad, a DTensor loss: no scalar recorded
    assert one_process_problem(run, real(), STEPS) is None
    lines = [{"step": s, "loss": v * 0.85**s} for s, v in real().items()]
    honest = run_with(tmp_path / "h", {s: [m] for s, m in real().items()})
    ok, detail, facts = loss_falls_as_trained(honest, lines, STEPS)
    assert not ok and facts["loss_last"] < facts["loss_first"]
    assert "(mean of the first and last 2 steps); the printed losses are not" in detail
    ok, detail, _ = loss_falls_as_trained(
        honest, [{"step": s, "loss": v} for s, v in real().items()], STEPS
    )
    assert ok, detail

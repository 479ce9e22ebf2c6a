"""Printed losses against the scalars the ranks' backward passes began from: each honest scale
fits, one scale must fit every step, and made-up numbers fit none."""

from __future__ import annotations

import pytest

from trainer_lab.grading.prompts.checks_printed import printed_loss_problem

MEANS = {1: 1.19, 2: 1.12, 3: 1.05, 4: 0.98}  # the global batch's mean loss per step
RESIDUES = {1: 180, 2: 172, 3: 201, 4: 160}
W = 2


@pytest.mark.parametrize(
    "trained",
    [
        {s: m for s, m in MEANS.items()},  # each rank: its sum / the global count
        {s: m * W for s, m in MEANS.items()},  # scaled by W for DDP's average
        {s: m * RESIDUES[s] for s, m in MEANS.items()},  # sums, divided after the exchange
    ],
    ids=["sum", "times-world", "sum-of-sums"],
)
def test_an_honest_scale_fits(trained: dict[int, float]) -> None:
    assert printed_loss_problem(MEANS, trained, RESIDUES, W) is None


def test_a_value_rounded_to_four_decimals_still_fits() -> None:
    printed = {s: round(m + 3e-5, 4) for s, m in MEANS.items()}
    assert printed_loss_problem(printed, MEANS, RESIDUES, W) is None


def test_made_up_numbers_fail_naming_the_first_step_and_every_scale() -> None:
    fake = {s: 1.0986 - 0.01 * s for s in MEANS}
    why = printed_loss_problem(fake, MEANS, RESIDUES, W)
    assert why is not None
    assert "step 1 printed 1.089" in why and "the sum 1.19" in why and "/ W=2 0.595" in why


def test_one_scale_must_fit_every_step() -> None:
    trained = {**MEANS, 3: MEANS[3] * W}  # step 3 in another scale than the others
    assert printed_loss_problem(MEANS, trained, RESIDUES, W) is not None


def test_a_small_drift_is_caught_and_nothing_trained_is_no_verdict() -> None:
    drifted = {**MEANS, 4: MEANS[4] * 1.01}
    assert "step 4" in (printed_loss_problem(drifted, MEANS, RESIDUES, W) or "")
    assert printed_loss_problem(MEANS, {}, RESIDUES, W) is None  # autograd.grad: not recorded

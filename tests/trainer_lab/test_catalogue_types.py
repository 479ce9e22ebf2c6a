"""ParamSpec parsing and validation: typed values, bounds, and no non-finite floats."""

from __future__ import annotations

import math

import pytest

from trainer_lab.catalogue import check_timeout, resolve_world_size
from trainer_lab.catalogue_types import LabSpec, ParamError, ParamSpec

DROPOUT = ParamSpec("dropout", "float", 0.1, "dropout", minimum=0.0, maximum=1.0)
TOLERANCE = ParamSpec("tolerance", "float", 1e-5, "allowed difference", minimum=0.0)


def test_finite_floats_pass() -> None:
    assert DROPOUT.parse("0.5") == 0.5
    assert DROPOUT.validate(1) == 1.0
    assert TOLERANCE.parse("1e300") == 1e300


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity"])
def test_non_finite_text_is_refused(text: str) -> None:
    # nan compares false with every bound, so without the check it passed [0, 1].
    with pytest.raises(ParamError, match="not a finite number"):
        DROPOUT.parse(text)
    with pytest.raises(ParamError, match="not a finite number"):
        TOLERANCE.parse(text)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_values_from_decks_are_refused(value: float) -> None:
    # YAML `{dropout: .nan}` / `.inf` reach validate() through the deck link checks.
    with pytest.raises(ParamError, match="dropout"):
        DROPOUT.validate(value)


SPEC = LabSpec("x", "x", default_world_size=2, min_world_size=2, max_world_size=4)


def test_world_size_zero_is_out_of_range_not_the_default() -> None:
    assert resolve_world_size(SPEC, None) == 2
    assert resolve_world_size(SPEC, 3) == 3
    for bad in (0, -1, 5):
        with pytest.raises(ParamError, match="out of range"):
            resolve_world_size(SPEC, bad)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 0, -1, 0.0, True])
def test_timeouts_must_be_finite_and_positive(bad: float) -> None:
    with pytest.raises(ParamError, match="finite number of seconds above 0"):
        check_timeout(bad)
    assert check_timeout(0.5) == 0.5

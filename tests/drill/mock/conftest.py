"""Mock-round tests run on a monotonic clock the test moves by hand."""

from __future__ import annotations

import pytest

from tests.support.clocks import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()

import pytest

from drill.claims.overlap import can_both_hold


@pytest.mark.parametrize(
    ("first", "second", "overlap"),
    [
        ("ratio < 1.2", "ratio >= 2", False),
        ("ratio < 3", "ratio >= 2", True),
        ("ratio < 2", "ratio >= 2", False),
        ("ratio <= 2", "ratio >= 2", True),
        ("status == ok", "status == failed", False),
        ("status == ok", "steps > 1", True),
        ("x == 2", "x != 2", False),
        ("x == 2", "x > 2", False),
        ("x == 2", "x >= 2", True),
        ("a > 1 and flag == true", "a > 5 and flag == false", False),
        ("a > 1 and flag == true", "a > 5 and flag == true", True),
    ],
)
def test_overlap_decides_mutual_exclusion(first: str, second: str, overlap: bool) -> None:
    assert can_both_hold(first, second) is overlap
    assert can_both_hold(second, first) is overlap

import pytest

from drill.claims.grammar import ClaimError, evaluate, parse_claim


def test_parse_reads_conjunctions_and_literals() -> None:
    claim = parse_claim("loss_jump_ratio >= 2 and status == 'ok' and exact == true")
    assert [(c.name, c.op, c.value) for c in claim.comparisons] == [
        ("loss_jump_ratio", ">=", 2),
        ("status", "==", "ok"),
        ("exact", "==", True),
    ]


@pytest.mark.parametrize(
    "text", ["", "ratio", "ratio >=", "ratio 2", ">= 2", "a < 1 or b > 2", "__import__('os') == 1"]
)
def test_malformed_claims_are_rejected(text: str) -> None:
    with pytest.raises(ClaimError):
        parse_claim(text)


def test_evaluate_reaches_nested_observations() -> None:
    outcome = evaluate("modes.full.max_abs_diff == 0", {"modes": {"full": {"max_abs_diff": 0.0}}})
    assert outcome.passed
    assert outcome.observed == {"modes.full.max_abs_diff": 0.0}


def test_evaluate_reports_why_a_claim_fails() -> None:
    outcome = evaluate("ratio >= 2", {"ratio": 1.1})
    assert not outcome.passed
    assert "1.1" in outcome.detail


def test_missing_observation_fails_with_its_name() -> None:
    outcome = evaluate("ratio >= 2", {"other": 3})
    assert not outcome.passed
    assert "ratio" in outcome.detail


def test_nan_is_never_ordered() -> None:
    assert not evaluate("loss < 10", {"loss": float("nan")}).passed
    assert not evaluate("loss >= 10", {"loss": float("nan")}).passed


@pytest.mark.parametrize(
    "text", ["loss < nan", "loss >= NaN", "loss < inf", "loss > -inf", "loss <= Infinity"]
)
def test_order_comparisons_with_nan_or_inf_are_rejected(text: str) -> None:
    with pytest.raises(ClaimError, match="says nothing"):
        parse_claim(text)


def test_a_number_that_overflows_to_infinity_is_rejected() -> None:
    with pytest.raises(ClaimError, match="reads as infinity"):
        parse_claim("loss < 1e999")


def test_equality_with_nan_tests_for_nan() -> None:
    assert evaluate("loss == nan", {"loss": float("nan")}).passed
    assert not evaluate("loss == nan", {"loss": 1.0}).passed
    assert evaluate("loss == nan", {"loss": "nan"}).passed  # how result.json writes NaN
    assert not evaluate("loss == nan", {"loss": "banana"}).passed
    assert evaluate("loss != nan", {"loss": 1.0}).passed
    assert not evaluate("loss != nan", {"loss": float("nan")}).passed
    assert evaluate("loss == inf", {"loss": float("inf")}).passed


def test_nan_choices_exclude_each_other() -> None:
    from drill.claims.overlap import can_both_hold

    assert not can_both_hold("loss == nan", "loss != nan")
    assert not can_both_hold("loss == nan", "loss < 3")
    assert can_both_hold("loss != nan", "loss < 3")

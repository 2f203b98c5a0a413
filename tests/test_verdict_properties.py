"""Properties of the one verdict rule (hypothesis): no claim is settled when a precondition of its metric fails or
is unresolved, or when the value's interval straddles the claim's threshold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analyzers.base import interval_quantile
from kb.evidence.verdicts import decide, evaluate
from schemas import Claim, Expectation, VerdictKind

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
operators = st.sampled_from(["<", "<=", ">", ">="])


def claim(op: str, threshold: float) -> Claim:
    return Claim.model_validate({"id": "c", "statement": "s", "expect": {"metric": "m", "op": op, "value": threshold}})


@settings(max_examples=200, deadline=None)
@given(value=finite, threshold=finite, op=operators, passed=st.sampled_from([False, None]),
       parent=st.booleans())
def test_property_a_failed_or_unresolved_precondition_settles_nothing(value: float, threshold: float, op: str,
                                                                     passed: bool | None, parent: bool) -> None:
    failing = {"name": "equilibrated", "passed": passed, "detail": "R-hat 1.4"}
    checks = ({"m": {"exact": True, "derived_from": ["p"]}, "p": {"preconditions": [failing]}} if parent
              else {"m": {"exact": True, "preconditions": [failing]}})
    verdict = evaluate(claim(op, threshold), [{"m": value, "p": 0.0, "checks": checks}])
    assert verdict.kind is VerdictKind.inconclusive and "equilibrated" in verdict.reason


@settings(max_examples=300, deadline=None)
@given(value=finite, stderr=st.floats(min_value=1e-6, max_value=1e3), threshold=finite, op=operators,
       units=st.integers(min_value=3, max_value=1000))
def test_property_an_interval_straddling_the_threshold_settles_nothing(value: float, stderr: float,
                                                                       threshold: float, op: str, units: int) -> None:
    verdict = evaluate(claim(op, threshold), [{"m": value, "checks": {"m": {"stderr": stderr, "units": units}}}])
    half = (interval_quantile(units) or 0.0) * stderr  # the t interval for its units (issue 35)
    low, high = value - half, value + half
    if low < threshold < high:
        assert verdict.kind is VerdictKind.inconclusive and "straddles" in verdict.reason
    else:
        assert verdict.kind is not VerdictKind.error


@settings(max_examples=300, deadline=None)
@given(low=finite, width=st.floats(min_value=0, max_value=1e3), threshold=finite, op=operators)
def test_property_a_decision_holds_for_every_point_of_its_interval(low: float, width: float, threshold: float,
                                                                   op: str) -> None:
    expect = Expectation.model_validate({"metric": "m", "op": op, "value": threshold})
    outcome = decide(expect, low, low + width)
    if outcome is not None:
        for point in (low, low + width / 2, low + width):
            assert decide(expect, point, point) is outcome


@settings(max_examples=100, deadline=None)
@given(value=finite, threshold=finite, op=operators)
def test_property_a_bare_number_in_a_checked_result_settles_nothing(value: float, threshold: float, op: str) -> None:
    verdict = evaluate(claim(op, threshold), [{"m": value, "checks": {}}])
    assert verdict.kind is VerdictKind.inconclusive and "no uncertainty stated" in verdict.reason

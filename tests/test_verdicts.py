"""Verdict logic for every operator, tolerance band, seed spread, scale proxy and missing metrics."""

from __future__ import annotations

from typing import Any

import pytest

from kb.evidence import claim_states as evidence
from kb.evidence.claim_states import ClaimState
from kb.evidence.verdicts import evaluate, proxy_outcome, resolve_metric
from schemas import Claim, EvidenceScale, VerdictKind


def _claim(expect: dict[str, Any], scale: dict[str, Any] | None = None) -> Claim:
    return Claim.model_validate({"id": "c", "statement": "s", "expect": expect, "scale": scale})


@pytest.mark.parametrize(
    ("expect", "observed", "kind"),
    [
        ({"metric": "m", "op": "<", "value": 5}, 4.9, "supported"),
        ({"metric": "m", "op": "<", "value": 5}, 5.0, "refuted"),
        ({"metric": "m", "op": "<=", "value": 5}, 5.0, "supported"),
        ({"metric": "m", "op": ">", "value": 5}, 5.0, "refuted"),
        ({"metric": "m", "op": ">=", "value": 5}, 5.0, "supported"),
        ({"metric": "m", "op": "==", "value": 3}, 3.0, "supported"),
        ({"metric": "m", "op": "==", "value": 3}, 3.1, "refuted"),
        ({"metric": "m", "op": "between", "value": [24, 36]}, 30, "supported"),
        ({"metric": "m", "op": "between", "value": [24, 36]}, 12, "refuted"),
        ({"metric": "m", "op": "approx", "value": 8.2, "tolerance": 0.5}, 8.6, "supported"),
        ({"metric": "m", "op": "approx", "value": 8.2, "tolerance": 0.5}, 8.8, "refuted"),
        ({"metric": "m", "op": "approx", "value": 100, "rel_tolerance": 0.1}, 109, "supported"),
        ({"metric": "m", "op": "approx", "value": 100, "rel_tolerance": 0.1}, 111, "refuted"),
        ({"metric": "m", "op": ">=", "value": 0.5, "inconclusive_band": 0.1}, 0.45, "inconclusive"),
        ({"metric": "m", "op": ">=", "value": 0.5, "inconclusive_band": 0.1}, 0.35, "refuted"),
        ({"metric": "m", "op": "==", "value": True}, True, "supported"),
        ({"metric": "m", "op": "==", "value": True}, False, "refuted"),
    ],
)
def test_evaluate_operator_outcomes(expect: dict[str, Any], observed: Any, kind: str) -> None:
    verdict = evaluate(_claim(expect), [{"m": observed}])
    assert verdict.kind == VerdictKind(kind), verdict.reason
    assert verdict.expected and "m" in verdict.expected


def test_evaluate_seed_spread_straddling_threshold_is_inconclusive() -> None:
    claim = _claim({"metric": "m", "op": ">", "value": 1.0})
    verdict = evaluate(claim, [{"m": 0.8}, {"m": 1.3}, {"m": 1.1}])
    assert verdict.kind is VerdictKind.inconclusive
    assert verdict.spread == pytest.approx(0.2516611, rel=1e-6)
    tight = evaluate(claim, [{"m": 1.5}, {"m": 1.6}, {"m": 1.55}])
    assert tight.kind is VerdictKind.supported and "3 seeds" in tight.reason


def test_evaluate_small_scale_proxy_never_plainly_supports() -> None:
    claim = _claim({"metric": "m", "op": ">", "value": 0}, scale={"parameters": 6.5e8})
    verdict = evaluate(claim, [{"m": 1.0}], EvidenceScale(name="smoke", parameters=1e5))
    assert verdict.kind is VerdictKind.inconclusive and verdict.proxy
    assert "proxy" in verdict.reason
    refuted = evaluate(claim, [{"m": -1.0}], EvidenceScale(name="smoke", parameters=1e5))
    assert refuted.kind is VerdictKind.inconclusive and "at odds with" in refuted.reason
    full = evaluate(claim, [{"m": 1.0}], EvidenceScale(name="paper", parameters=6.5e8))
    assert full.kind is VerdictKind.supported and not full.proxy


def test_evaluate_proxy_records_which_way_it_leans_and_old_verdicts_read_the_same() -> None:
    claim = _claim({"metric": "m", "op": ">", "value": 0, "inconclusive_band": 0.1}, scale={"parameters": 6.5e8})
    small = EvidenceScale(name="smoke", parameters=1e5)
    leans = {observed: evaluate(claim, [{"m": observed}], small) for observed in (1.0, -1.0, 0.05)}
    assert [v.proxy_outcome for v in leans.values()] == ["consistent", "at_odds", None]  # 0.05: inside the band
    assert all(v.kind is VerdictKind.inconclusive and v.proxy for v in leans.values())
    assert [proxy_outcome(v) for v in leans.values()] == ["consistent", "at_odds", None]
    # Verdicts stored before the field existed say it in the reason only: read the same from there.
    legacy = [v.model_copy(update={"proxy_outcome": None}) for v in leans.values()]
    assert [proxy_outcome(v) for v in legacy] == ["consistent", "at_odds", None]
    assert evidence.verdict_state(legacy[0]) is ClaimState.consistent_proxy
    assert evidence.verdict_state(leans[-1.0]) is ClaimState.at_odds_proxy
    assert evidence.verdict_state(leans[0.05]) is ClaimState.inconclusive
    full = evaluate(claim, [{"m": 1.0}], EvidenceScale(name="paper", parameters=6.5e8))
    assert full.proxy_outcome is None and evidence.verdict_state(full) is ClaimState.supported


def test_evaluate_missing_metric_is_error_listing_available() -> None:
    verdict = evaluate(_claim({"metric": "layers.9.kl", "op": "<", "value": 1}), [{"layers": [{"kl": 0.1}]}])
    assert verdict.kind is VerdictKind.error and "layers.9.kl" in verdict.reason


def test_evaluate_without_expectation_is_inconclusive() -> None:
    claim = Claim.model_validate({"id": "c", "statement": "s"})
    assert evaluate(claim, [{}]).kind is VerdictKind.inconclusive


def test_resolve_metric_walks_dicts_and_lists() -> None:
    assert resolve_metric({"a": {"b": [1, {"c": 7}]}}, "a.b.1.c") == 7
    assert resolve_metric({"a": [1, 2, 3]}, "a.-1") == 3

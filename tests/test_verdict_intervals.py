"""Intervals right at any n, and no member dropped (issue 35), through the real builders: ``probe_estimates``
(the jackknife over sequences), ``probe_checks`` / ``family_result`` (a family's trend), ``sweep_checks`` (a
depth sweep's trend), ``result_record`` and ``kb.evidence.verdicts.evaluate``. Each class has a case that must fail
(read inconclusive) and one that must pass (settle), and the t quantile is checked against an independent
computation (``scipy.stats.t`` and a tabled value)."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from analyzers.base import MIN_UNITS, extreme_interval, interval_quantile, result_record
from analyzers.depth.compute import family_result, probe_checks
from analyzers.depth.spec import DepthProbe, DepthProbeResult
from analyzers.depth.sweep import sweep_checks
from analyzers.depth.training import TokenScores
from analyzers.depth.uncertainty import probe_estimates
from kb.evidence.verdicts import decide, evaluate, value_across_seeds
from schemas import Claim, EvidenceScale, VerdictKind

SCALE = EvidenceScale(name="paper", parameters=1e6)
UNIGRAM = 0.05


def claim(metric: str, op: str, value: Any) -> Claim:
    return Claim.model_validate({"id": "c", "statement": "s", "expect": {"metric": metric, "op": op, "value": value},
                                 "scale": {"parameters": 1e6}})


def probe_result(per_sequence: list[float], ratio: float | None = None, ratio_error: float | None = None,
                 model: str = "m", num_layers: int = 12) -> DepthProbeResult:
    """A depth.probe result whose ``stable_rank_retention`` is the mean of ``per_sequence`` (one value per probed
    sequence), its standard error the jackknife of ``probe_estimates`` over those sequences; the model learned
    (accuracy 0.5 on every sequence against a unigram baseline of 0.05)."""
    values = torch.tensor(per_sequence, dtype=torch.float64)
    rows = {"stable_rank_retention": (values, torch.ones_like(values)),
            "baseline_accuracy": (torch.full_like(values, 0.5), torch.ones_like(values))}
    estimates: dict[str, tuple[Any, Any]] = dict(probe_estimates(rows, num_layers))
    if ratio is not None:
        estimates["late_to_early_skip_effect_ratio"] = (ratio, math.nan if ratio_error is None else ratio_error)
    metrics: dict[str, Any] = {name: None for name in DepthProbe.metrics if not name.endswith("_by_model")}
    metrics |= {"stable_rank_retention": float(estimates["stable_rank_retention"][0]), "baseline_accuracy": 0.5,
                "late_to_early_skip_effect_ratio": ratio}
    return DepthProbeResult(**metrics, model=model, num_layers=num_layers, layers={}, scale=SCALE,
                            checks=probe_checks(0.5, UNIGRAM, estimates, len(per_sequence)))


def record(per_sequence: list[float]) -> dict[str, Any]:
    return result_record(probe_result(per_sequence))


METRIC = "stable_rank_retention"


# -- the t quantile ------------------------------------------------------------------------------------------

def test_the_quantile_is_students_t_for_units_minus_one_degrees_of_freedom() -> None:
    assert interval_quantile(3) == pytest.approx(4.302653, rel=1e-6)  # t(2), 97.5 %: the printed table's value
    assert interval_quantile(31) == pytest.approx(2.042272, rel=1e-6)  # t(30)
    assert interval_quantile(10_000) == pytest.approx(1.960, abs=1e-3)  # large samples: the normal quantile
    assert interval_quantile(5, dof=3) == pytest.approx(3.182446, rel=1e-6)  # a slope over 5 points: t(3)
    assert interval_quantile(2) is None and interval_quantile(None) is None and MIN_UNITS == 3


# -- small samples: a jackknife over 2 or 3 sequences must not settle ----------------------------------------

def test_a_jackknife_over_three_sequences_reads_its_t2_interval_and_does_not_settle() -> None:
    # mean 0.6, SE 0.0577: +- 2 SE = [0.485, 0.715] would settle '> 0.45'; t(2) = 4.30 gives [0.35, 0.85]
    verdict = evaluate(claim(METRIC, ">", 0.45), [record([0.5, 0.6, 0.7])], SCALE)
    assert verdict.kind is VerdictKind.inconclusive and "straddles" in verdict.reason, verdict.reason
    assert "over 3 sequences" in verdict.reason


def test_a_jackknife_over_two_sequences_is_unresolved_and_says_so() -> None:
    verdict = evaluate(claim(METRIC, ">", 0.1), [record([0.60, 0.61])], SCALE)
    assert verdict.kind is VerdictKind.inconclusive
    assert "only 2 sequences" in verdict.reason and "fewer than 3" in verdict.reason


def test_the_same_spread_over_thirty_sequences_settles() -> None:
    values = [0.5, 0.6, 0.7] * 10
    verdict = evaluate(claim(METRIC, ">", 0.45), [record(values)], SCALE)
    assert verdict.kind is VerdictKind.supported, verdict.reason
    sd = statistics.stdev(values)
    half = interval_quantile(30) * sd / math.sqrt(30)  # type: ignore[operator]
    assert f"[{0.6 - half:.4g}, {0.6 + half:.4g}]" in verdict.reason and "over 30 sequences" in verdict.reason


# -- seeds: an interval for their mean, carrying each seed's own error ----------------------------------------

def test_three_seeds_050_045_minus002_are_not_supported_for_above_zero() -> None:
    seeds = [record([v - 0.01, v, v + 0.01] * 10) for v in (0.50, 0.45, -0.02)]
    verdict = evaluate(claim(METRIC, ">", 0.0), seeds, SCALE)
    assert verdict.kind is VerdictKind.inconclusive and "straddles" in verdict.reason, verdict.reason
    assert "mean of 3 seeds" in verdict.reason and "t(2)" in verdict.reason
    agreeing = [record([v - 0.01, v, v + 0.01] * 10) for v in (0.50, 0.45, 0.48)]
    assert evaluate(claim(METRIC, ">", 0.0), agreeing, SCALE).kind is VerdictKind.supported


def test_seeds_that_agree_still_carry_their_own_noise() -> None:
    # three seeds at the same mean, each over 3 noisy sequences: between-seed SE 0, within-seed SE large
    noisy = [record([0.2, 0.6, 1.0]) for _ in range(3)]
    combined = value_across_seeds(noisy, METRIC)
    own = interval_quantile(3) * statistics.stdev([0.2, 0.6, 1.0]) / math.sqrt(3)  # type: ignore[operator]
    pooled = math.sqrt(3 * (own / interval_quantile(3)) ** 2) / 3  # type: ignore[operator]
    assert combined.low == pytest.approx(0.6 - interval_quantile(3) * pooled)  # type: ignore[operator]
    assert "within seeds" in combined.basis
    assert evaluate(claim(METRIC, ">", 0.45), noisy, SCALE).kind is VerdictKind.inconclusive


def test_two_seeds_are_unresolved_three_can_settle() -> None:
    two = [record([v - 0.01, v, v + 0.01] * 10) for v in (0.50, 0.51)]
    verdict = evaluate(claim(METRIC, ">", 0.0), two, SCALE)
    assert verdict.kind is VerdictKind.inconclusive and "only 2 seeds" in verdict.reason
    three = [*two, record([0.49, 0.5, 0.51] * 10)]
    assert evaluate(claim(METRIC, ">", 0.0), three, SCALE).kind is VerdictKind.supported


def interior(resolved: bool, value: bool = True) -> dict[str, Any]:
    bounds = [1.0, 1.0] if resolved and value else [0.0, 0.0] if resolved else [0.0, 1.0]
    return {"flag": value, "checks": {"flag": {"interval": bounds, "source": "sequences", "units": 40}}}


def test_a_true_false_metric_over_seeds_needs_every_seed_resolved_and_unanimous() -> None:
    flag = claim("flag", "==", True)
    assert evaluate(flag, [interior(True)] * 3, SCALE).kind is VerdictKind.supported
    unresolved = evaluate(flag, [interior(True), interior(True), interior(False)], SCALE)
    assert unresolved.kind is VerdictKind.inconclusive and "seed 3 of 3 did not resolve it" in unresolved.reason
    split = evaluate(flag, [interior(True), interior(True), interior(True, value=False)], SCALE)
    assert split.kind is VerdictKind.inconclusive and "seeds disagree" in split.reason


# -- no silent drops: a family's and a sweep's trend --------------------------------------------------------

def family(ratios: list[float | None], errors: list[float | None]) -> dict[str, Any]:
    members = [probe_result([0.5, 0.6, 0.7] * 10, ratio, error, model=f"m{layers}", num_layers=layers)
               for layers, ratio, error in zip([6, 12, 24, 48], ratios, errors, strict=True)]
    return result_record(family_result(members))


TREND = claim("depth_inefficiency_trend", ">", 0.0)


def test_a_family_trend_from_every_member_settles() -> None:
    verdict = evaluate(TREND, [family([0.8, 0.4, 0.2, 0.1], [0.01] * 4)], SCALE)
    assert verdict.kind is VerdictKind.supported, verdict.reason
    assert "t(checkpoints - 2)" in verdict.reason


@pytest.mark.parametrize(("ratios", "errors", "named"), [
    ([0.8, 0.4, 0.2, 0.0], [0.01] * 4, "m48: ratio 0, log undefined"),  # the deepest member contradicts: ratio 0
    ([0.8, 0.4, 0.2, 0.5], [0.01, 0.01, 0.01, None], "m48: ratio 0.5 has no standard error"),
    ([0.8, None, 0.2, 0.1], [0.01] * 4, "m12: no ratio"),
])
def test_a_family_member_that_cannot_count_fails_the_trend_naming_it(ratios: list[float | None],
                                                                     errors: list[float | None], named: str) -> None:
    verdict = evaluate(TREND, [family(ratios, errors)], SCALE)
    assert verdict.kind is VerdictKind.inconclusive, verdict.reason
    assert "every member failed" in verdict.reason and named in verdict.reason


def sweep(ratios: list[float | None]) -> dict[str, Any]:
    depths = [6, 12, 24, 48]
    scores = [TokenScores([10 * (2.0 + 0.01 * (i % 3)) for i in range(30)], [6] * 30, [10] * 30) for _ in depths]
    rows = [{"depth": d, "converged": True, "convergence": "flat", "val_perplexity": math.exp(s.loss)}
            for d, s in zip(depths, scores, strict=True)]
    from analyzers.depth.sweep import inefficiency_trend
    found = sweep_checks(depths, rows, scores, 0.1, ratios)
    return {"depth_inefficiency_trend": inefficiency_trend(depths, ratios),
            "checks": {k: v.model_dump() for k, v in found.items()}}


def test_a_sweep_depth_without_a_ratio_fails_the_trend_naming_it() -> None:
    dropped = evaluate(TREND, [sweep([0.8, 0.4, None, 0.1])], SCALE)
    assert dropped.kind is VerdictKind.inconclusive and "24 layers (no ratio)" in dropped.reason, dropped.reason
    zero = evaluate(TREND, [sweep([0.8, 0.4, 0.2, 0.0])], SCALE)
    assert "48 layers (ratio 0: log undefined)" in zero.reason
    full = evaluate(TREND, [sweep([0.8, 0.41, 0.2, 0.1])], SCALE)
    assert full.kind is VerdictKind.supported, full.reason
    assert "t(depths - 2)" in full.reason


# -- properties ---------------------------------------------------------------------------------------------

unit_value = st.floats(min_value=-10, max_value=10, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(unit_value, min_size=1, max_size=MIN_UNITS - 1), threshold=unit_value,
       op=st.sampled_from(["<", "<=", ">", ">="]))
def test_property_no_decision_survives_shrinking_the_sample_below_the_minimum(values: list[float],
                                                                               threshold: float, op: str) -> None:
    # fewer than 3 sequences behind one seed's standard error, or fewer than 3 seeds: nothing is decided
    one_seed = evaluate(claim(METRIC, op, threshold), [record(values)], SCALE)
    assert one_seed.kind is VerdictKind.inconclusive
    seeds = [record([v - 0.01, v, v + 0.01] * 5) for v in values]
    if len(seeds) > 1:
        assert evaluate(claim(METRIC, op, threshold), seeds, SCALE).kind is VerdictKind.inconclusive


@settings(max_examples=60, deadline=None)
@given(means=st.lists(st.floats(min_value=0.1, max_value=1.0), min_size=3, max_size=5),
       spread=st.floats(min_value=0.001, max_value=0.3), threshold=st.floats(min_value=0.0, max_value=1.0),
       op=st.sampled_from(["<", "<=", ">", ">="]))
def test_property_a_decided_claim_stays_decided_for_every_point_of_its_interval(
        means: list[float], spread: float, threshold: float, op: str) -> None:
    seeds = [record([m - spread, m, m + spread] * 3) for m in means]
    verdict = evaluate(claim(METRIC, op, threshold), seeds, SCALE)
    combined = value_across_seeds(seeds, METRIC)
    if verdict.kind in (VerdictKind.supported, VerdictKind.refuted):
        assert combined.low is not None and combined.high is not None
        expect = claim(METRIC, op, threshold).expect
        assert expect is not None
        for share in (0.0, 0.25, 0.5, 0.75, 1.0):
            point = combined.low + share * (combined.high - combined.low)
            assert decide(expect, point, point) is (verdict.kind is VerdictKind.supported)


@settings(max_examples=40, deadline=None)
@given(extra=st.one_of(st.floats(min_value=0.1, max_value=5.0), st.just(0.0), st.none()),
       error=st.one_of(st.floats(min_value=0.001, max_value=0.1), st.none()))
def test_property_adding_a_contradicting_member_never_leaves_the_claim_supported(extra: float | None,
                                                                                 error: float | None) -> None:
    # three members falling 0.8 > 0.4 > 0.2 support '> 0'; a fourth, deepest one at or above the shallowest's
    # ratio, with no ratio, ratio 0 or no standard error, contradicts it or cannot be counted
    ratios: list[float | None] = [0.8, 0.4, 0.2, None if extra is None else max(extra, 0.8) if extra else 0.0]
    verdict = evaluate(TREND, [family(ratios, [0.01, 0.01, 0.01, error])], SCALE)
    assert verdict.kind is not VerdictKind.supported, verdict.reason


def test_the_interval_of_the_smaller_of_parts_is_their_simultaneous_intervals_smaller_ends() -> None:
    # independent computation: each part +- t(n - 1) at 1 - 0.05 / (2 x parts) (Bonferroni), from scipy directly
    q = stats.t.ppf(1 - 0.05 / 4, 39)
    low, high = extreme_interval([(4.1, 0.3, 40), (0.5, 0.1, 40)])  # type: ignore[misc]
    assert low == pytest.approx(0.5 - q * 0.1) and high == pytest.approx(min(4.1 + q * 0.3, 0.5 + q * 0.1))
    low, high = extreme_interval([(0.9, 0.02, 40), (0.7, 0.05, 40)], largest=True)  # type: ignore[misc]
    assert low == pytest.approx(max(0.9 - q * 0.02, 0.7 - q * 0.05)) and high == pytest.approx(0.9 + q * 0.02)
    # a part that resolves nothing is never left out: the whole is unresolved
    assert extreme_interval([(4.1, 0.3, 40), (0.5, None, 40)]) is None
    assert extreme_interval([(4.1, 0.3, 40), (0.5, 0.1, 2)]) is None


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.tuples(st.floats(-5, 5), st.floats(0.001, 2)), min_size=1, max_size=6))
def test_property_the_smaller_is_above_zero_exactly_when_every_part_is(parts: list[tuple[float, float]]) -> None:
    q = interval_quantile(30, comparisons=len(parts))
    assert q is not None
    interval = extreme_interval([(v, e, 30) for v, e in parts])
    assert interval is not None
    assert (interval[0] > 0) is all(v - q * e > 0 for v, e in parts)
    assert (interval[1] < 0) is any(v + q * e < 0 for v, e in parts)

"""The depth checks have power both ways (issue 35): on synthetic per-sequence data with a known answer, run
through the analyzers' own builders (``analyzers.depth.power``), each check passes a known yes and fails a known no
with probability >= 0.95 at the presets meant to answer a claim. Seeded, so each rate is one fixed number; the
full table (every check x preset, 400 trials) is the slow test at the end and the README's Power section."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzers.base import interval_quantile, result_record
from analyzers.depth import power
from analyzers.depth.compute import family_result, learned_precondition
from analyzers.depth.spec import DepthProbe, DepthSweep
from kb.evidence.verdicts import evaluate
from schemas import Claim, EvidenceScale, VerdictKind

SMALL_PROBE = next(size for size in power.PROBE_SIZES if size.name == "small")
SMALL_SWEEP = next(size for size in power.SWEEP_SIZES if size.name == "small")


def test_the_simulated_sizes_are_the_presets_own() -> None:
    for size in power.PROBE_SIZES:
        assert size.sequences == DepthProbe.scales[size.name]["max_sequences"]
    assert SMALL_SWEEP.depths == tuple(DepthSweep.scales["small"]["depths"])
    assert SMALL_SWEEP.validation == DepthSweep.scales["small"]["max_val_sequences"]
    assert SMALL_PROBE.sequences == 128  # lengthened from 32, where 'learned' passed a 0.05 gap 0.56 of the time


@pytest.mark.parametrize("check", ["learned", "resolved (a mean)"])
def test_a_probe_check_has_power_both_ways_at_small(check: str) -> None:
    trial = power.PROBE_CHECKS[check][0]
    passed, failed = power.rates(trial, SMALL_PROBE, trials=100, seed=1)
    assert passed >= 0.95 and failed >= 0.95, (check, passed, failed)


def test_the_sweeps_best_depth_has_power_both_ways_at_small() -> None:
    # uncorrected, a tie is resolved at the nominal 5 %, on the 0.95 line; Bonferroni over the k - 1 comparisons
    passed, failed = power.rates(power.sweep_best_depth, SMALL_SWEEP, trials=50, seed=2)
    assert passed >= 0.95 and failed >= 0.95, (passed, failed)


@pytest.mark.parametrize("missing", ["rise", "fall"])
def test_the_fall_and_rise_has_power_both_ways_at_small(missing: str) -> None:
    # both parts must be resolved above 0: a monotone curve (no rise) or a flat start (no fall) fails it
    trial = power.SWEEP_CHECKS[f"fall and rise resolved (no {missing})"][0]
    passed, failed = power.rates(trial, SMALL_SWEEP, trials=20, seed=5)
    assert passed >= 0.95 and failed >= 0.95, (missing, passed, failed)


def test_every_model_of_six_plms_has_power_both_ways() -> None:
    # the smallest of six members' shares, each interval Bonferroni-corrected over the six: one model at the
    # threshold keeps "in every PLM" unsettled
    six = next(size for size in power.PROBE_SIZES if size.name == "six_plms")
    passed, failed = power.rates(power.family_bound, six, trials=20, seed=6)
    assert passed >= 0.95 and failed >= 0.95, (passed, failed)


def test_the_smoke_probe_cannot_pass_a_medium_effect_and_says_so_by_failing() -> None:
    # 8 sequences: a 0.05 gap over the baseline is below what t(7) resolves, so smoke reads 'not learned'
    smoke = next(size for size in power.PROBE_SIZES if size.name == "smoke")
    passed, failed = power.rates(power.probe_learned, smoke, trials=100, seed=3)
    assert passed < 0.5 and failed >= 0.95


def test_learned_uses_the_t_quantile_for_its_sequences_and_needs_three() -> None:
    # gap 0.05, SE 0.022 over 8 sequences: 2 SE (0.044) would pass; t(7) x SE (0.052) does not
    below = learned_precondition(0.25, 0.20, 0.022, units=8)
    assert below.passed is False and "t(7)" in below.detail
    assert 2 * 0.022 < 0.05 < interval_quantile(8) * 0.022  # type: ignore[operator]
    assert learned_precondition(0.25, 0.20, 0.022, units=40).passed is True
    two = learned_precondition(0.9, 0.2, 0.01, units=2)
    assert two.passed is None and "only 2 sequences" in two.detail


def test_the_simulation_judges_as_kb_verdicts_do() -> None:
    # the power module's 'resolved' is the interval kb.evidence.verdicts reads: the same records, the same answer
    claim = Claim.model_validate({"id": "c", "statement": "s", "scale": {"parameters": 1e6},
                                  "expect": {"metric": "stable_rank_retention", "op": ">", "value": 0.0}})
    rng = np.random.default_rng(4)
    agreed = []
    for yes in (True, False) * 10:
        result = power.mean_result(rng, power.ProbeSize("test", 24, (8,)), yes)
        verdict = evaluate(claim, [result_record(result)], EvidenceScale(name="power", parameters=1e6))
        resolved = power.resolved_above(result, "stable_rank_retention", 0.0)
        assert resolved is (verdict.kind is VerdictKind.supported), verdict.reason
        agreed.append(resolved)
    assert any(agreed) and not all(agreed)  # both answers occurred


@pytest.mark.slow
def test_the_power_table_meets_the_rule_where_the_readme_says_it_does() -> None:
    # every check at every preset meant to answer a claim, >= 0.95 both ways, except the two rows the README
    # names as short (a 1.5x-per-doubling trend over small's 4 depths; convergence with 0.3 % evaluation jitter)
    short = {("depth.sweep", "trend resolved (1.5x)", "small"), ("depth.sweep", "converged (jitter 0.3%)", "small"),
             ("depth.sweep", "converged (jitter 0.3%)", "paper")}
    for row in power.power_table(trials=400):  # the README table itself (seed 0)
        key = (row["analyzer"], row["check"], row["preset"])
        if row["answers"] and key not in short:
            assert row["pass"] >= 0.95 and row["fail"] >= 0.95, row
        if not row["answers"] or key in short:
            assert row["fail"] >= 0.95, row  # a check short of power still never passes a known no


@settings(max_examples=80, deadline=None)
@given(accuracy=st.floats(min_value=0.0, max_value=1.0), unigram=st.floats(min_value=0.0, max_value=1.0),
       stderr=st.floats(min_value=1e-6, max_value=0.5), units=st.integers(min_value=0, max_value=2))
def test_property_learned_decides_nothing_below_three_sequences(accuracy: float, unigram: float, stderr: float,
                                                               units: int) -> None:
    assert learned_precondition(accuracy, unigram, stderr, units).passed is None


@settings(max_examples=30, deadline=None)
@given(ratios=st.lists(st.floats(min_value=0.05, max_value=5.0), min_size=2, max_size=2))
def test_property_a_two_checkpoint_family_trend_is_never_resolved(ratios: list[float]) -> None:
    # a slope through two points has no degrees of freedom left (t(0)): whatever the ratios, nothing is decided
    members = [power.member({"late_to_early_skip_effect_ratio": (r, 0.01 * r)}, layers, 128)
               for r, layers in zip(ratios, (6, 48), strict=True)]
    assert not power.resolved_above(family_result(members), "depth_inefficiency_trend", 0.0)

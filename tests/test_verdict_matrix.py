"""The verdict matrix (issue 26): constructed evidence for the bundled notes' claims, each case with the verdict a
careful reviewer gives, run through the real check builders (``analyzers.langevin.checks``,
``analyzers.depth.sweep.sweep_checks``), the real result record (``result_record``) and the real verdict rule."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzers.base import result_record
from analyzers.depth.sweep import sweep_checks as depth_checks
from analyzers.depth.training import TokenScores
from analyzers.langevin import analysis, checks
from analyzers.langevin.spec import ContactsResult, SweepResult
from kb.verdicts import evaluate
from schemas import Claim, EvidenceScale, VerdictKind

PAPERS = Path(__file__).resolve().parents[1] / "papers"
TEMPERATURES = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3]
BASELINE = 0.8739  # the smoke transformer's error at every T: predicting the most frequent residue


def bundled_claim(note: str, claim_id: str) -> Claim:
    text = (PAPERS / note).read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---")[1])
    return Claim.model_validate(next(c for c in front["claims"] if c["id"] == claim_id))


def row(temperature: float, error: float, sd: float = 0.002, equilibrated: bool = True,
        draws: int = 25) -> dict[str, Any]:
    """One temperature's summary as ``compute.temperature_summary`` + ``sampler_health`` leave it."""
    return {
        "temperature": temperature, "test_error": error, "test_error_std": sd, "snapshots_averaged": 6,
        "equilibrated": equilibrated, "loss_drift": 0.0, "specific_heat": 1.0, "mean_loss": 1.0, "loss_std": 0.01,
        "convergence": {"state": "equilibrated" if equilibrated else "metastable", "rhat": 1.02 if equilibrated else
                        1.4, "draws_per_chain": draws, "ess": 40.0},
        "thermostat": {"thermalized_every_direction": True, "resolved": True, "worst_direction_offset": 0.05,
                       "kinetic_temperature_standard_error": [0.03 * temperature]},
    }


def sweep_record(errors: list[float], sd: float = 0.002, equilibrated: list[bool] | None = None,
                 es: tuple[float, ...] = (0.80, 0.81, 0.82)) -> dict[str, Any]:
    """A sweep result built from per-temperature rows by the real builders, as the run would store it."""
    flags = equilibrated or [True] * len(errors)
    rows = [row(t, e, sd, ok) for t, e, ok in zip(TEMPERATURES, errors, flags, strict=True)]
    references = {"transformer": {"ES": list(es), "OT": list(es)}}
    found = checks.sweep_checks(TEMPERATURES, {"transformer": rows}, references, BASELINE, 0)
    result = SweepResult(
        scale=EvidenceScale(name="small", parameters=44245.0), temperatures=TEMPERATURES, start="ES",
        mean_loss_by_temperature={}, specific_heat_by_temperature={}, train_error_by_temperature={},
        validation_error_by_temperature={}, test_errors_by_model={"transformer": errors},
        test_error_by_temperature=errors, test_error_min_is_interior=analysis.is_interior_minimum(errors),
        test_error_min_is_interior_by_model={"transformer": analysis.is_interior_minimum(errors)},
        best_test_error_minus_es=min(errors) - sum(es) / len(es), validation_selected_temperature=1e-4,
        best_test_error_minus_es_by_model={"transformer": min(errors) - sum(es) / len(es)},
        peak_temperature={"transformer": 1e-4}, normalized_temperatures={},
        specific_heat_peak_ratio_ffn_over_transformer=None, loss_jump_ratio_ffn_over_transformer=None,
        max_norm_drift=0.0, equilibrated_by_temperature={"transformer": flags}, loss_drift_by_temperature={},
        trained={}, design={}, checks=found,
    )
    return result_record(result)


GENERALIZATION = ("sampling-intermediate-temperatures-langevin.md", "generalization-min-intermediate-t")


@pytest.mark.parametrize(("errors", "sd", "equilibrated", "kind", "words"), [
    ([0.80, 0.70, 0.60, 0.72, 0.81], 0.002, None, "supported", "meets"),
    # 0.001 below its neighbours (the lowest T among them) with a snapshot spread of 0.02: location unresolved
    ([0.701, 0.700, 0.701, 0.75, 0.80], 0.02, None, "inconclusive", "straddles"),
    # the same spread, but every temperature that ties with the minimum is interior: resolved
    ([0.80, 0.701, 0.700, 0.701, 0.81], 0.02, None, "supported", "meets"),
    # resolved at the lowest temperature on an equilibrated curve: refuted, whatever the ES references read
    ([0.79, 0.83, 0.85, 0.86, 0.87], 0.002, None, "refuted", "fails"),
    ([0.80, 0.70, 0.60, 0.72, 0.81], 0.002, [False, True, True, True, True], "inconclusive",
     "equilibrated failed: transformer at T=1e-05: metastable"),
    ([BASELINE] * 5, 0.0, None, "inconclusive",
     "did not learn beyond the majority-residue baseline (0.8739 vs 0.8739)"),
])
def test_matrix_generalization_minimum(errors: list[float], sd: float, equilibrated: list[bool] | None, kind: str,
                                       words: str) -> None:
    claim = bundled_claim(*GENERALIZATION)
    verdict = evaluate(claim, [sweep_record(errors, sd, equilibrated)], EvidenceScale(name="small", parameters=44245))
    assert verdict.kind is VerdictKind(kind), verdict.reason
    assert words in verdict.reason


def test_matrix_sibling_metrics_inherit_the_guards() -> None:
    """test_error_min_is_interior_by_model.* and best_test_error_minus_es_by_model.* read the same curve."""
    record = sweep_record([BASELINE] * 5, 0.0)
    for metric in ("test_error_min_is_interior_by_model.transformer", "best_test_error_minus_es_by_model.transformer",
                   "peak_temperature.transformer", "test_error_by_temperature.2"):
        claim = Claim.model_validate({"id": "c", "statement": "s", "expect": {"metric": metric, "op": ">", "value": 0}}
                                     if "interior" not in metric else
                                     {"id": "c", "statement": "s", "expect": {"metric": metric, "op": "==",
                                                                              "value": True}})
        verdict = evaluate(claim, [record])
        assert verdict.kind is VerdictKind.inconclusive and "did not learn" in verdict.reason, (metric, verdict.reason)


def contacts_record(errors: list[float], tolerant: list[float], sd: float = 0.002,
                    equilibrated: list[bool] | None = None) -> dict[str, Any]:
    flags = equilibrated or [True] * len(errors)
    rows = [row(t, e, sd, ok) for t, e, ok in zip(TEMPERATURES, errors, flags, strict=True)]
    best_c = max(range(len(tolerant)), key=lambda i: tolerant[i])
    best_e = min(range(len(errors)), key=lambda i: errors[i])
    trained = {"ES": {"p_at_l": 0.3, "tolerance_precision": 0.3}, "OT": {"p_at_l": 0.4, "tolerance_precision": 0.4}}
    found = checks.contacts_checks(TEMPERATURES, rows, tolerant, tolerant, 500, {}, trained, BASELINE,
                                   {"ES": 0.7, "OT": 0.6})
    result = ContactsResult(
        scale=EvidenceScale(name="small", parameters=44245.0), temperatures=TEMPERATURES,
        p_at_l_by_temperature=tolerant, tolerance_precision_by_temperature=tolerant,
        best_block_by_temperature=[0] * 5, test_error_by_temperature=errors,
        best_contact_temperature_over_best_error_temperature=TEMPERATURES[best_c] / TEMPERATURES[best_e],
        best_p_at_l_temperature_over_best_error_temperature=TEMPERATURES[best_c] / TEMPERATURES[best_e],
        trained_scores=trained, ot_minus_es_tolerance_precision=0.1, ot_minus_es_p_at_l=0.1, rule="", checks=found,
    )
    return result_record(result)


CONTACTS = ("sampling-intermediate-temperatures-langevin.md", "attention-predicts-contacts-at-higher-t")


@pytest.mark.parametrize(("errors", "tolerant", "equilibrated", "kind", "words"), [
    ([0.80, 0.60, 0.70, 0.75, 0.80], [0.2, 0.3, 0.5, 0.9, 0.4], None, "supported", "meets"),
    # contacts best at the best-learning temperature itself: "higher" fails
    ([0.80, 0.60, 0.70, 0.75, 0.80], [0.2, 0.9, 0.5, 0.3, 0.4], None, "refuted", "fails"),
    # no best-learning temperature: the error is flat (the smoke run's case)
    ([BASELINE] * 5, [0.2, 0.3, 0.5, 0.9, 0.4], None, "inconclusive", "did not learn"),
    ([0.80, 0.60, 0.70, 0.75, 0.80], [0.2, 0.3, 0.5, 0.9, 0.4], [True, False, True, True, True], "inconclusive",
     "equilibrated failed"),
])
def test_matrix_contacts_at_higher_temperature(errors: list[float], tolerant: list[float],
                                               equilibrated: list[bool] | None, kind: str, words: str) -> None:
    verdict = evaluate(bundled_claim(*CONTACTS), [contacts_record(errors, tolerant, equilibrated=equilibrated)],
                       EvidenceScale(name="small", parameters=44245))
    assert verdict.kind is VerdictKind(kind), verdict.reason
    assert words in verdict.reason


def test_matrix_flat_error_with_learning_is_a_straddling_location() -> None:
    """A flat error curve above noise (the model learned, no temperature is better): the ratio's interval spans
    every pair of tied temperatures and straddles 1."""
    verdict = evaluate(bundled_claim(*CONTACTS), [contacts_record([0.6] * 5, [0.2, 0.3, 0.5, 0.9, 0.4])])
    assert verdict.kind is VerdictKind.inconclusive and "straddles" in verdict.reason, verdict.reason


def depth_record(perplexity_nll: list[list[float]], converged: list[bool],
                 ratios: list[float | None]) -> dict[str, Any]:
    """A depth-sweep evidence dict with the real checks (``sweep_checks``) over per-sequence NLL sums."""
    depths = [2, 4, 8][: len(perplexity_nll)]
    scores = [TokenScores(nll_sums=nll, correct=[6] * len(nll), counts=[10] * len(nll)) for nll in perplexity_nll]
    rows = [{"depth": d, "converged": ok, "convergence": "flat" if ok else "validation loss still falling",
             "val_perplexity": math.exp(s.loss)} for d, ok, s in zip(depths, converged, scores, strict=True)]
    found = depth_checks(depths, rows, scores, 0.1, ratios)
    best = min(range(len(rows)), key=lambda i: rows[i]["val_perplexity"])
    from analyzers.depth.sweep import inefficiency_trend
    return {"depths": depths, "best_depth": depths[best], "best_depth_is_interior": 0 < best < len(depths) - 1,
            "depth_inefficiency_trend": inefficiency_trend(depths, ratios),
            "checks": {k: v.model_dump() for k, v in found.items()}}


def test_matrix_depth_best_depth_and_trend() -> None:
    noisy = [[20.0 + (i % 3) for i in range(12)], [19.95 + (i % 4) * 0.7 for i in range(12)],
             [20.1 + (i % 5) * 0.5 for i in range(12)]]
    clear = [[24.0 + 0.1 * (i % 3) for i in range(12)], [18.0 + 0.1 * (i % 3) for i in range(12)],
             [22.0 + 0.1 * (i % 3) for i in range(12)]]
    interior = Claim.model_validate({"id": "c", "statement": "s", "expect": {
        "metric": "best_depth_is_interior", "op": "==", "value": True}})
    assert evaluate(interior, [depth_record(clear, [True] * 3, [0.5, 0.4, 0.3])]).kind is VerdictKind.supported
    unresolved = evaluate(interior, [depth_record(noisy, [True] * 3, [0.5, 0.4, 0.3])])
    assert unresolved.kind is VerdictKind.inconclusive and "straddles" in unresolved.reason
    unconverged = evaluate(interior, [depth_record(clear, [True, False, True], [0.5, 0.4, 0.3])])
    assert "not trained to convergence" in unconverged.reason
    trend = bundled_claim("siji-2026-curse-of-depth-in-plms.md", "effect-grows-with-depth")
    # a trend with an error bar from its residuals: decided at the paper's scale only, a proxy here
    wobbly = evaluate(trend, [depth_record(clear, [True] * 3, [0.5, 0.3, 0.45])],
                      EvidenceScale(name="paper", parameters=6.5e8))
    assert wobbly.kind is VerdictKind.inconclusive and "straddles" in wobbly.reason, wobbly.reason
    steady = evaluate(trend, [depth_record(clear, [True] * 3, [0.5, 0.25, 0.125])],
                      EvidenceScale(name="paper", parameters=6.5e8))
    assert steady.kind is VerdictKind.supported, steady.reason  # on a line: residual standard error ~0
    two = evaluate(trend, [depth_record(clear[:2], [True] * 2, [0.5, 0.25])], EvidenceScale(name="paper",
                                                                                              parameters=6.5e8))
    assert two.kind is VerdictKind.inconclusive and "no uncertainty stated" in two.reason  # two depths: no error bar


@pytest.mark.parametrize(("value", "words"), [(None, "no value"), (float("nan"), "no value"),
                                              ("n/a", "wrong type"), ([1, 2], "wrong type")])
def test_matrix_invalid_values_are_never_refuted_nor_errors(value: Any, words: str) -> None:
    claim = Claim.model_validate({"id": "c", "statement": "s", "expect": {"metric": "m", "op": "==", "value": 0.5}})
    for record in ({"m": value}, {"m": value, "checks": {"m": {"exact": True}}}):
        verdict = evaluate(claim, [record])
        assert verdict.kind is VerdictKind.inconclusive and words in verdict.reason, verdict.reason


def test_matrix_result_record_writes_strict_json_and_marks_non_finite_metrics() -> None:
    record = sweep_record([0.80, 0.70, 0.60, 0.72, 0.81])
    assert record["specific_heat_peak_ratio_ffn_over_transformer"] is None
    failed = record["checks"]["specific_heat_peak_ratio_ffn_over_transformer"]["preconditions"]
    assert failed[0]["name"] == "valid" and failed[0]["passed"] is False

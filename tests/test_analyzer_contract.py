"""The analyzer contract of issue 26, for every registered analyzer: each metric declares its uncertainty source
or that it is exact, and a result carries a check for every metric path whose value needs one."""

from __future__ import annotations

import pytest

from analyzers import registry
from analyzers.base import UNCERTAINTY_SOURCES, AnalyzerResult, MetricCheck, metric_declarations
from schemas import EvidenceScale

ANALYZERS = sorted(registry.load_all())


@pytest.mark.parametrize("name", ANALYZERS)
def test_contract_every_metric_declares_its_uncertainty_or_exactness(name: str) -> None:
    declared = metric_declarations(registry.get(name).Result)
    assert declared, f"{name} declares no metric"
    for metric, found in declared.items():
        assert found.exact or found.uncertainty in UNCERTAINTY_SOURCES, (
            f"{name}.{metric}: declare metric(uncertainty=one of {UNCERTAINTY_SOURCES}) or metric(exact=True)")
        assert not (found.exact and found.rests_on), f"{name}.{metric}: an exact metric rests on nothing"


def test_contract_exact_metrics_get_their_check_without_the_builder() -> None:
    from analyzers.langevin.spec import DesignResult

    result = DesignResult(
        scale=EvidenceScale(name="smoke"), num_sequences=2, temperatures=[1.0], mean_energy_by_temperature=[0.0],
        acceptance_swap_by_temperature=[0.5], acceptance_temperature_moves=0.5, energy_decreases_with_temperature=True,
        composition_exact=True, mean_pairwise_identity=0.3, site_entropy=1.5, consecutive_identity=0.4,
        sequences_per_second=10.0, mean_sample_energy=-1.0,
    )
    assert result.checks["composition_exact"] == MetricCheck(exact=True, source="exact")
    assert "samples_equilibrated" not in result.checks  # a test result: no error bar, so it settles nothing


def test_contract_base_result_has_checks_and_reads_untestable() -> None:
    fields = AnalyzerResult.model_fields
    assert "checks" in fields and "untestable" in fields

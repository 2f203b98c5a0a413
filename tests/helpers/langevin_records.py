"""Langevin sweep results constructed through the real check builders and result record, as a run would store
them: what the verdict matrix and the 'learned' tests share."""

from __future__ import annotations

from typing import Any

from analyzers.base import result_record
from analyzers.langevin import analysis, checks
from analyzers.langevin.spec import SweepResult
from schemas import EvidenceScale

TEMPERATURES = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3]
BASELINE = 0.8739  # the smoke transformer's error at every T: predicting the most frequent residue
TEST_SEQUENCES = 500  # the `small` preset's test split: the 'learned' margin's sampling error (issue 35)



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
    found = checks.sweep_checks(TEMPERATURES, {"transformer": rows}, references, BASELINE, 0, TEST_SEQUENCES)
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

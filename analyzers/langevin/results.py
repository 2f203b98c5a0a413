"""Typed results of the Langevin analyzers: the metrics a claim can reference, the stated rules of its
metrics, the notes a reader must see and the provenance of the run. ``result_builders`` computes them
from one ``Experiment``; this module stays free of numpy and torch so that registering the analyzers is
cheap.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from analyzers.base import AnalyzerResult


class SweepResult(AnalyzerResult):
    """Loss, specific heat and errors against sampling temperature, transformer vs feed-forward."""

    model_config = ConfigDict(ser_json_inf_nan="constants")  # NaN (not computable) stays NaN in JSON

    temperatures: list[float] = Field(description="Sampling temperatures.")
    start: str = Field(description="Weights the sampling started from (ES or OT).")
    mean_loss_by_temperature: dict[str, list[float]] = Field(description="Mean full training loss per model.")
    specific_heat_by_temperature: dict[str, list[float]] = Field(description="C = var(L)/T^2 per model.")
    train_error_by_temperature: dict[str, list[float]] = Field(description="Mean training error per model.")
    validation_error_by_temperature: dict[str, list[float]] = Field(description="Mean validation error per model.")
    test_errors_by_model: dict[str, list[float]] = Field(description="Mean test error per model and temperature.")
    test_error_by_temperature: list[float] = Field(description="Transformer masked test error per temperature.")
    test_error_min_is_interior: bool = Field(description="Transformer: lowest test error at neither end of the list.")
    best_test_error_minus_es: float = Field(description="Transformer: min over T of test error minus the ES value.")
    validation_selected_temperature: float = Field(description="Transformer: T of the lowest validation error.")
    peak_temperature: dict[str, float] = Field(
        description="T of the specific-heat maximum per model, among the equilibrated temperatures when there are any."
    )
    normalized_temperatures: dict[str, list[float]] = Field(description="T / T(peak C) per model.")
    specific_heat_peak_ratio_ffn_over_transformer: float | None = Field(
        description="(max C / mean C) of the ffn over the same for the transformer, over the temperatures where both "
        "equilibrated; NaN with fewer than three such temperatures, None without the ffn."
    )
    loss_jump_ratio_ffn_over_transformer: float | None = Field(
        description="Largest rise of the mean loss between neighbouring temperatures, ffn over transformer."
    )
    max_norm_drift: float = Field(description="Largest |(|w|^2 - Q)| seen while sampling (constraint check).")
    equilibrated_by_temperature: dict[str, list[bool]] = Field(
        description="Per model: no significant drift of the training loss across the averaging window."
    )
    loss_drift_by_temperature: dict[str, list[float]] = Field(
        description="Per model: mean loss of the last minus the first quarter of the averaging window."
    )
    thermostat_by_temperature: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="Per model and temperature: minibatch share r used (capped so the worst noise direction stays "
        "within 5% of T, the same at every T), amplification of the top minibatch-noise directions, kinetic "
        "temperature on average and along those directions, and whether every direction is within 20% of T.",
    )
    trained: dict[str, dict[str, dict[str, float]]] = Field(description="ES / OT metrics per model.")
    design: dict[str, Any] = Field(description="Designed-sequence diagnostics (acceptance, identity, energies).")


class ContactsResult(AnalyzerResult):
    """Mean attention against the contact map along the temperatures, and ES vs OT."""

    model_config = ConfigDict(ser_json_inf_nan="constants")

    temperatures: list[float] = Field(description="Sampling temperatures.")
    p_at_l_by_temperature: list[float] = Field(description="P@L of the best block's symmetrized mean attention.")
    p_at_l_chance_by_temperature: list[dict[str, float]] = Field(
        default_factory=list,
        description="Per temperature: P@L, the chance level (contact fraction of the candidate pairs) and the "
        "one-sided p-value of a shuffled-contact permutation test (2,000 shuffles).",
    )
    tolerance_precision_by_temperature: list[float] = Field(description="The paper's tolerant precision (best block).")
    best_block_by_temperature: list[int] = Field(description="Block whose attention matched best (0-based).")
    test_error_by_temperature: list[float] = Field(description="Transformer masked test error per temperature.")
    best_contact_temperature_over_best_error_temperature: float = Field(
        description="T of the highest tolerant precision divided by T of the lowest test error."
    )
    best_p_at_l_temperature_over_best_error_temperature: float = Field(
        description="The same ratio with P@L instead of the tolerant precision."
    )
    trained_scores: dict[str, dict[str, float]] = Field(description="ES / OT: P@L and tolerant precision (best block).")
    ot_minus_es_tolerance_precision: float = Field(description="Tolerant precision of OT minus that of ES.")
    ot_minus_es_p_at_l: float = Field(description="P@L of OT minus that of ES.")
    rule: str = Field(description="The pair-selection rules of the metrics.")
    tolerance_precision_chance: float = Field(
        default=float("nan"), description="Tolerant precision of a random ranking of pairs (its expectation).")
    p_at_l_chance: float = Field(default=float("nan"), description="P@L of a random ranking of pairs.")
    best_tolerance_precision_p_value: float = Field(
        default=float("nan"), description="Exact hypergeometric p-value of the best temperature's tolerant "
        "precision against a random ranking of pairs.")


class SimilarityResult(AnalyzerResult):
    """Per-layer similarity q between sampled weight vectors at one temperature."""

    model_config = ConfigDict(ser_json_inf_nan="constants")

    temperature_by_model: dict[str, float] = Field(description="T analysed per model (lowest mean test error).")
    mean_q_by_layer: dict[str, dict[str, float]] = Field(description="Mean q per model and layer.")
    normalization_mean_q: dict[str, float] = Field(description="Mean q of the LayerNorm gains/biases per model.")
    other_mean_q: dict[str, float] = Field(description="Mean q of all other layers per model.")
    normalization_q_minus_other_q: float = Field(description="Transformer: LayerNorm mean q minus the others'.")
    snapshots: dict[str, int] = Field(description="Weight snapshots compared per model.")

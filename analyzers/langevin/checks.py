"""What each Langevin metric rests on and how uncertain it is: the ``checks`` of the sweep, contacts and
similarity results (the contract of ``analyzers.base``; ``kb.evidence.verdicts`` decides from them).

Uncertainties, per temperature:

* a sampled test error: the standard error of its mean over the snapshots after burn-in, sd / sqrt(n)
  (snapshots are ``snapshot_every`` steps apart and treated as independent; the equilibration check below is
  what guards a chain that has not mixed);
* a contact precision over the L top pairs: the binomial standard error sqrt(p (1 - p) / L);
* a specific heat C = var(L) / T^2: relative standard error sqrt(2 / (ESS - 1)) of a variance from ESS draws;
  a mean loss: loss sd / sqrt(ESS);
* a location (the temperature of the lowest error, of the best contacts, of the peak of C): the temperatures
  whose value ties with the best one within ``Z_RESOLVED`` combined standard errors; a ratio of two locations
  ranges over every pair of tied temperatures.

Preconditions: the model *learned* (its lowest sampled test error beats always predicting the most frequent
residue by more than ``Z_RESOLVED`` standard errors), the temperature *equilibrated* (split-R-hat over the
chains from each start below 1.1 with enough draws, no drift across the averaging window) and is *thermalized*
(the kinetic temperature of every coordinate pooled within 20 % of T by its t interval, no leading noise
direction resolved off: three outcomes, at T, off T, unresolved). A metric read off the whole
curve (a minimum's location, a peak, a jump) rests on every temperature.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from analyzers.base import (
    Z_RESOLVED,
    MetricCheck,
    Precondition,
    interval_quantile,
    too_few_units,
    truth_interval,
)
from analyzers.langevin.convergence import MIN_BULK_ESS, RHAT_LIMIT
from analyzers.langevin.thermostat import TOLERANCE as THERMOSTAT_TOLERANCE


def snapshot_stderr(std: float, count: int) -> float | None:
    """Standard error of a mean over ``count`` snapshots whose population sd (ddof 0) is ``std``."""
    if count < 2 or not math.isfinite(std):
        return None
    return std / math.sqrt(count - 1)


def binomial_stderr(precision: float, pairs: int) -> float:
    """Standard error of a precision over ``pairs`` ranked pairs."""
    return math.sqrt(max(precision * (1.0 - precision), 0.0) / max(pairs, 1))


def tied_with_best(
    values: Sequence[float], stderrs: Sequence[float | None], lowest: bool = True
) -> list[int]:
    """Indices whose value ties with the best (lowest or highest) within Z_RESOLVED combined standard errors;
    a value without a standard error ties with everything (nothing resolves it)."""
    signed = [v if lowest else -v for v in values]
    best = min(range(len(signed)), key=lambda i: signed[i])
    if stderrs[best] is None:
        return list(range(len(values)))
    tied = []
    for i, value in enumerate(signed):
        error = stderrs[i]
        if error is None or value - signed[best] <= Z_RESOLVED * math.hypot(error, stderrs[best] or 0.0):
            tied.append(i)
    return tied


def location_interval(temperatures: Sequence[float], tied: Sequence[int]) -> tuple[float, float]:
    """[lowest, highest] temperature among the tied ones."""
    chosen = [temperatures[i] for i in tied]
    return min(chosen), max(chosen)


def interior_check(
    temperatures: Sequence[float], tied: Sequence[int], rests: list[Precondition]
) -> MetricCheck:
    """``the minimum is at neither end``: resolved true when every tied temperature is interior, resolved
    false when none is."""
    last = len(temperatures) - 1
    interior = [0 < i < last for i in tied]
    shown = ", ".join(f"{temperatures[i]:g}" for i in tied)
    return MetricCheck(
        interval=truth_interval(all(interior), not any(interior)),
        source="snapshots",
        preconditions=rests,
        note=f"the lowest test error ties (within {Z_RESOLVED:g} combined snapshot standard errors) at T = "
             f"{shown}",
    )


def gap_stderr_bound(error: float, baseline: float, sequences: int) -> float:
    """An upper bound on the standard error, from the test set's own sampling, of the difference between two
    mean per-sequence error rates measured on the same ``sequences`` test sequences (a model's and the
    baseline's): a per-sequence error in [0, 1] with mean p has variance at most p (1 - p) (Bhatia-Davis), and
    the difference of two such means at most (sd_a + sd_b)^2 / n whatever their pairing (Cauchy-Schwarz). A
    bound, so the check is conservative: it says 'learned' only where the test set cannot have made the
    gap."""
    spread = math.sqrt(max(error * (1 - error), 0.0)) + math.sqrt(max(baseline * (1 - baseline), 0.0))
    return spread / math.sqrt(sequences)


def learned(name: str, errors: Sequence[float], stderrs: Sequence[float | None], baseline: float,
            test_sequences: int | None = None) -> Precondition:
    """Did the model learn beyond predicting the most frequent residue? Its lowest sampled test error must
    beat that baseline by more than the t margin (``interval_quantile`` over the test sequences) of the test
    set's sampling error (``gap_stderr_bound``) and the chain's snapshot error together; unresolved where the
    test set's size is not known or under ``MIN_UNITS``. The margin is shown."""
    best = min(range(len(errors)), key=lambda i: errors[i])
    quantile = interval_quantile(test_sequences)
    if quantile is None or test_sequences is None:
        why = too_few_units(test_sequences, "test sequences")
        return Precondition(name="learned", passed=None,
                            detail=f"{name}: {why} (the test set's sampling error is not known)")
    error = math.hypot(gap_stderr_bound(errors[best], baseline, test_sequences), stderrs[best] or 0.0)
    margin = quantile * error
    passed = baseline - errors[best] > margin
    what = "learned beyond" if passed else "did not learn beyond"
    return Precondition(
        name="learned",
        passed=bool(passed),
        detail=(
            f"{name} {what} the majority-residue baseline ({errors[best]:.4f} vs {baseline:.4f}); a gap of "
            f"{baseline - errors[best]:.4f} against a margin of {margin:.4f}: t({test_sequences - 1}) × the "
            f"test set's sampling error over {test_sequences} sequences and the snapshots'"
        ),
    )


def thermostat_state(thermostat: dict[str, Any] | None) -> str:
    """'at T', 'off T' or 'unresolved' (``thermostat.thermostat_report``'s ``state``): at T when the kinetic
    temperature of every coordinate pooled lies within 20 % of T by its t interval and no leading noise
    direction is resolved off; off T when either is resolved off; else unresolved (no kinetic readings, fewer
    than three blocks, or an interval across a bound). A report without a ``state`` (written before the pooled
    estimate) is read by its old rule."""
    thermostat = thermostat or {}
    if "state" in thermostat:
        return str(thermostat["state"])
    if thermostat.get("thermalized_every_direction") is False:
        return "off T"
    if thermostat.get("thermalized_every_direction") and thermostat.get("resolved"):
        return "at T"
    return "unresolved"


def temperature_conditions(name: str, row: dict[str, Any]) -> list[Precondition]:
    """Whether one temperature of one model equilibrated and is at its T, with the numbers."""
    temperature = row["temperature"]
    convergence = row.get("convergence") or {}
    state = convergence.get("state", "equilibrated" if row.get("equilibrated") else "relaxing")
    rhat, draws = convergence.get("rhat", math.nan), convergence.get("draws_per_chain", 0)
    equilibrated: bool | None = bool(row.get("equilibrated"))
    if state == "unresolved":
        equilibrated = None
    ess = convergence.get("ess", math.nan)
    detail = (
        f"{name} at T={temperature:g}: {state} (split-R-hat {rhat:.3g} vs {RHAT_LIMIT}, bulk ESS {ess:.3g} "
        f"vs {MIN_BULK_ESS}, {draws} draws per chain; loss drift {row.get('loss_drift', math.nan):.3g})"
    )
    needed = convergence.get("steps_needed")
    if state != "equilibrated" and needed:  # what to run instead, from the autocorrelation these chains show
        detail += f"; it needs chains of at least ~{int(float(f'{needed:.3g}')):,} steps (sampling_steps)"
    thermostat = row.get("thermostat") or {}
    at = thermostat_state(thermostat)
    heat = f"{name} at T={temperature:g}: {at} ({_kinetic_detail(thermostat, temperature)})"
    passed = True if at == "at T" else False if at == "off T" else None
    return [Precondition(name="equilibrated", passed=equilibrated, detail=detail),
            Precondition(name="thermalized", passed=passed, detail=heat)]


def _kinetic_detail(thermostat: dict[str, Any], temperature: float) -> str:
    """The numbers behind a thermostat state, in one phrase."""
    interval = thermostat.get("kinetic_temperature_mean_interval_over_t")
    if interval is None:  # a report from before the pooled estimate: its directions only
        errors = thermostat.get("kinetic_temperature_standard_error") or []
        relative = 2 * max(errors) / temperature if errors else math.nan
        return (f"worst direction off by {thermostat.get('worst_direction_offset', math.nan):.0%}, 2 SE "
                f"{relative:.0%}; {THERMOSTAT_TOLERANCE:.0%} allowed")
    mean = thermostat.get("kinetic_temperature_mean", math.nan) / temperature
    error = thermostat.get("kinetic_temperature_mean_standard_error", math.nan) / temperature
    off = [i + 1 for i, s in enumerate(thermostat.get("direction_states") or []) if s == "off T"]
    directions = f"; noise direction(s) {off} resolved off" if off else ""
    return (f"kinetic temperature of all {thermostat.get('kinetic_degrees_of_freedom')} degrees of freedom "
            f"{mean:.3f} T, SE {error:.2g} T over {thermostat.get('kinetic_units')} blocks, interval "
            f"[{interval[0]:.3f}, {interval[1]:.3f}] T against 1 ± {THERMOSTAT_TOLERANCE:g}{directions}")


def every_temperature(conditions: list[list[Precondition]]) -> list[Precondition]:
    """One precondition per kind over a whole curve: failed if any temperature failed, unresolved if any could
    not tell, the failing temperatures' details joined."""
    merged = []
    for kind in ("equilibrated", "thermalized"):
        found = [c for row in conditions for c in row if c.name == kind]
        bad = [c for c in found if c.passed is not True]
        passed = True if not bad else False if any(c.passed is False for c in bad) else None
        detail = "; ".join(c.detail for c in bad) if bad else f"every temperature {kind}"
        merged.append(Precondition(name=kind, passed=passed, detail=detail))
    return merged


def sweep_checks(
    temperatures: list[float], rows_by_model: dict[str, list[dict[str, Any]]],
    references: dict[str, dict[str, list[float]]], baseline: float, both_equilibrated: int,
    test_sequences: int | None = None,
) -> dict[str, MetricCheck]:
    """The checks of every sweep metric path (see the module docstring); ``test_sequences``: the test split's
    size (the 'learned' precondition's sampling error)."""
    checks: dict[str, MetricCheck] = {}
    facts: dict[str, dict[str, Any]] = {}
    for name, rows in rows_by_model.items():
        errors = [row["test_error"] for row in rows]
        stderrs = [snapshot_stderr(row["test_error_std"], row["snapshots_averaged"]) for row in rows]
        per_t = [temperature_conditions(name, row) for row in rows]
        facts[name] = {"errors": errors, "stderrs": stderrs, "per_t": per_t,
                       "learned": learned(name, errors, stderrs, baseline, test_sequences),
                       "curve": every_temperature(per_t)}
    for name, fact in facts.items():
        rests = [fact["learned"], *fact["curve"]]
        tied = tied_with_best(fact["errors"], fact["stderrs"])
        checks[f"test_error_min_is_interior_by_model.{name}"] = interior_check(temperatures, tied, rests)
        es = [e for e in references.get(name, {}).get("ES", []) if math.isfinite(e)]
        best = min(range(len(fact["errors"])), key=lambda i: fact["errors"][i])
        es_error = (math.sqrt(sum((e - sum(es) / len(es)) ** 2 for e in es) / (len(es) - 1) / len(es))
                    if len(es) > 1 else None)  # fmt: skip
        spread = Precondition(name="ES references", passed=len(es) > 1,
                              detail=f"{len(es)} ES reference run(s) for {name} (2 needed for a spread)")
        minimum = fact["stderrs"][best]
        checks[f"best_test_error_minus_es_by_model.{name}"] = MetricCheck(
            stderr=math.hypot(minimum, es_error) if minimum is not None and es_error is not None else None,
            source="ES seeds (the fewer of them and the snapshots)",
            units=min(len(es), int(rows_by_model[name][best]["snapshots_averaged"])),
            preconditions=[*rests, spread],
            note="snapshot standard error of the lowest error and the ES references' standard error "
            "across seeds",
        )
        checks[f"peak_temperature.{name}"] = _peak_check(temperatures, rows_by_model[name], rests)
    transformer = facts["transformer"]
    checks["test_error_by_temperature"] = MetricCheck(
        source="snapshots", preconditions=[transformer["learned"]]
    )
    for index, (error, conditions) in enumerate(
        zip(transformer["stderrs"], transformer["per_t"], strict=True)
    ):
        checks[f"test_error_by_temperature.{index}"] = MetricCheck(
            stderr=error,
            source="snapshots",
            units=int(rows_by_model["transformer"][index]["snapshots_averaged"]),
            preconditions=conditions,
        )
    for metric in ("test_error_min_is_interior", "best_test_error_minus_es"):
        checks[metric] = checks[f"{metric}_by_model.transformer"]
    for metric in (
        "test_error_min_is_interior_by_model",
        "best_test_error_minus_es_by_model",
        "peak_temperature",
    ):
        checks[metric] = MetricCheck(source="snapshots", note="per model: see each model's path")
    if "ffn" in rows_by_model:
        both = [facts["transformer"]["learned"], facts["ffn"]["learned"]]
        checks["specific_heat_peak_ratio_ffn_over_transformer"] = _ratio_check(
            rows_by_model, "heat", [*both, Precondition(
                name="equilibrated", passed=both_equilibrated >= 3,
                detail=f"{both_equilibrated} temperature(s) where both models equilibrated (3 needed for a "
                       "heat-capacity peak comparison)")] + every_temperature(
                [c for fact in facts.values() for c in fact["per_t"]])[1:])
        checks["loss_jump_ratio_ffn_over_transformer"] = _ratio_check(
            rows_by_model,
            "jump",
            [*both, *every_temperature([c for fact in facts.values() for c in fact["per_t"]])],
        )
    return checks


def _heat_stderr(row: dict[str, Any]) -> float | None:
    ess = (row.get("convergence") or {}).get("ess", math.nan)
    if not (isinstance(ess, float | int) and math.isfinite(ess) and ess > 1):
        return None
    return float(row["specific_heat"]) * math.sqrt(2.0 / (ess - 1.0))


def _peak_check(
    temperatures: list[float], rows: list[dict[str, Any]], rests: list[Precondition]
) -> MetricCheck:
    heat = [row["specific_heat"] for row in rows]
    tied = tied_with_best(heat, [_heat_stderr(row) for row in rows], lowest=False)
    return MetricCheck(
        interval=location_interval(temperatures, tied),
        source="locations",
        preconditions=rests,
        note="temperatures whose specific heat ties with the peak's within "
        f"{Z_RESOLVED:g} standard errors (relative SE sqrt(2 / (ESS - 1)))",
    )


def _ratio_check(rows_by_model: dict[str, list[dict[str, Any]]], kind: str,
                 rests: list[Precondition]) -> MetricCheck:
    """Relative standard error of ffn-over-transformer ratios: the peak C's (heat) or the largest loss rise's
    (jump) relative errors added in quadrature."""
    relative = []
    draws = [
        int(ess)
        for rows in rows_by_model.values()
        for row in rows
        if isinstance(ess := (row.get("convergence") or {}).get("ess"), float | int) and math.isfinite(ess)
    ]
    for name in ("ffn", "transformer"):
        rows = rows_by_model[name]
        if kind == "heat":
            peak = max(range(len(rows)), key=lambda i: rows[i]["specific_heat"])
            error = _heat_stderr(rows[peak])
            relative.append(
                error / rows[peak]["specific_heat"]
                if error is not None and rows[peak]["specific_heat"]
                else None
            )
            continue
        means = [row["mean_loss"] for row in rows]
        loss_se = []
        for row in rows:
            ess = (row.get("convergence") or {}).get("ess", math.nan)
            ok = isinstance(ess, float | int) and math.isfinite(ess) and ess > 0
            loss_se.append(row["loss_std"] / math.sqrt(ess) if ok else None)
        if len(means) < 2:
            relative.append(None)
            continue
        step = max(range(len(means) - 1), key=lambda i: means[i + 1] - means[i])
        rise = means[step + 1] - means[step]
        pair = (loss_se[step], loss_se[step + 1])
        ratio = math.hypot(*pair) / rise if None not in pair and rise > 0 else None  # type: ignore[arg-type]
        relative.append(ratio)
    known = [r for r in relative if r is not None]
    if len(known) < 2:
        return MetricCheck(source="snapshots", preconditions=rests, note="no standard error (too few draws)")
    # the relative error: ``scale_ratio`` multiplies it by the ratio once the ratio is known
    return MetricCheck(stderr=math.hypot(*known), source="effective draws (the fewest of any temperature)",
                       units=min(draws) if draws else None, preconditions=rests,
                       note=f"relative standard error {math.hypot(*known):.3g}")


def scale_ratio(check: MetricCheck, ratio: float | None) -> MetricCheck:
    """A ratio's check with its relative standard error turned absolute (times the ratio)."""
    if check.stderr is None or ratio is None or not math.isfinite(ratio):
        return check.model_copy(update={"stderr": None})
    return check.model_copy(update={"stderr": abs(ratio) * check.stderr})


def contacts_checks(
    temperatures: list[float], rows: list[dict[str, Any]], p_at_l: list[float], tolerant: list[float],
    pairs: int, untestable: dict[str, str], trained: dict[str, dict[str, float]], baseline: float,
    trained_errors: dict[str, float], test_sequences: int | None = None,
) -> dict[str, MetricCheck]:
    """The checks of every contacts metric path. ``untestable``: the chance test's failures
    (``contact_untestable``)."""
    errors = [row["test_error"] for row in rows]
    stderrs = [snapshot_stderr(row["test_error_std"], row["snapshots_averaged"]) for row in rows]
    model = learned("transformer", errors, stderrs, baseline, test_sequences)
    per_t = [temperature_conditions("transformer", row) for row in rows]
    curve = every_temperature(per_t)

    def chance(metric: str) -> Precondition:
        why = untestable.get(metric)
        return Precondition(
            name="beats chance", passed=why is None, detail=why or f"{metric} beats shuffled contacts"
        )

    checks: dict[str, MetricCheck] = {}
    error_tied = tied_with_best(errors, stderrs)
    for curve_name, values, ratio in (
        ("p_at_l_by_temperature", p_at_l, "best_p_at_l_temperature_over_best_error_temperature"),
        (
            "tolerance_precision_by_temperature",
            tolerant,
            "best_contact_temperature_over_best_error_temperature",
        ),
    ):
        checks[curve_name] = MetricCheck(source="pairs", preconditions=[model, chance(curve_name)])
        for index, (value, conditions) in enumerate(zip(values, per_t, strict=True)):
            checks[f"{curve_name}.{index}"] = MetricCheck(
                stderr=binomial_stderr(value, pairs), source="pairs", units=pairs, preconditions=conditions
            )
        contact_tied = tied_with_best(values, [binomial_stderr(v, pairs) for v in values], lowest=False)
        ratios = [temperatures[c] / temperatures[e] for c in contact_tied for e in error_tied]
        shown = ", ".join(f"{temperatures[i]:g}" for i in error_tied)
        checks[ratio] = MetricCheck(
            interval=(min(ratios), max(ratios)),
            source="locations",
            derived_from=[curve_name],
            preconditions=[chance(ratio), *curve],
            note=f"best contacts tie at T = {', '.join(f'{temperatures[i]:g}' for i in contact_tied)}, the "
            f"lowest test error at T = {shown} (within {Z_RESOLVED:g} combined standard errors)",
        )
    es_error = trained_errors.get("ES", math.nan)
    trained_learned = Precondition(
        name="learned",
        passed=bool(baseline - es_error > 0),
        detail=f"ES weights {'learned' if baseline - es_error > 0 else 'did not learn'} beyond the "
        f"majority-residue baseline ({es_error:.4f} vs {baseline:.4f})",
    )
    for metric, difference in (("p_at_l", "ot_minus_es_p_at_l"),
                               ("tolerance_precision", "ot_minus_es_tolerance_precision")):
        if "ES" in trained and "OT" in trained:
            error = math.hypot(binomial_stderr(trained["ES"][metric], pairs),
                               binomial_stderr(trained["OT"][metric], pairs))
            checks[difference] = MetricCheck(stderr=error, source="pairs", units=pairs,
                                             preconditions=[trained_learned, chance(difference)])
    checks["chance_by_temperature"] = MetricCheck(source="permutations", preconditions=[model],
                                                  note="p-values from shuffled contact maps")
    return checks


def similarity_checks(
    temperatures: list[float], rows_by_model: dict[str, list[dict[str, Any]]], baseline: float,
    q_by_model: dict[str, dict[str, Any]], snapshots: dict[str, int], is_normalization: Any,
    test_sequences: int | None = None,
) -> dict[str, MetricCheck]:
    """The checks of the similarity metrics: q's standard error over the snapshots at the temperature of the
    lowest test error, which must itself be resolved (a single temperature ties with the best)."""
    checks: dict[str, MetricCheck] = {}
    layer_errors: dict[str, dict[str, float | None]] = {}
    rests_by_model: dict[str, list[Precondition]] = {}
    for name, rows in rows_by_model.items():
        errors = [row["test_error"] for row in rows]
        stderrs = [snapshot_stderr(row["test_error_std"], row["snapshots_averaged"]) for row in rows]
        best = min(range(len(errors)), key=lambda i: errors[i])
        tied = tied_with_best(errors, stderrs)
        resolved = Precondition(
            name="resolved",
            passed=len(tied) == 1,
            detail=f"{name}: the lowest test error ties at T = "
                   f"{', '.join(f'{temperatures[i]:g}' for i in tied)}"
            f" (q is read at T={temperatures[best]:g})",
        )
        rests = [learned(name, errors, stderrs, baseline, test_sequences), resolved,
                 *temperature_conditions(name, rows[best])]
        rests_by_model[name] = rests
        count = snapshots.get(name, 0)
        layer_errors[name] = {}
        for layer, values in q_by_model.get(name, {}).items():
            error = float(values.std()) / math.sqrt(count - 1) if count > 1 and len(values) > 1 else None
            layer_errors[name][layer] = error
            checks[f"mean_q_by_layer.{name}.{layer}"] = MetricCheck(
                stderr=error, source="snapshots", units=count
            )
        norm = [e for layer, e in layer_errors[name].items() if is_normalization(layer)]
        checks[f"normalization_mean_q.{name}"] = MetricCheck(stderr=_mean_stderr(norm), source="snapshots",
                                                             units=count, preconditions=rests)
        checks[f"mean_q_by_layer.{name}"] = MetricCheck(source="snapshots", preconditions=rests)
    checks["mean_q_by_layer"] = MetricCheck(source="snapshots")
    checks["normalization_mean_q"] = MetricCheck(source="snapshots")
    by_layer = layer_errors.get("transformer", {})
    norm_error = _mean_stderr([e for layer, e in by_layer.items() if is_normalization(layer)])
    other_error = _mean_stderr([e for layer, e in by_layer.items() if not is_normalization(layer)])
    checks["normalization_q_minus_other_q"] = MetricCheck(
        stderr=math.hypot(norm_error, other_error)
        if norm_error is not None and other_error is not None
        else None,
        source="snapshots",
        units=snapshots.get("transformer"),
        derived_from=["normalization_mean_q.transformer", "mean_q_by_layer.transformer"],
    )
    return checks


def _mean_stderr(errors: list[float | None]) -> float | None:
    """Standard error of a mean of independent values with these standard errors (None: one is unknown)."""
    known = [e for e in errors if e is not None]
    if not errors or len(known) < len(errors):
        return None
    return math.sqrt(sum(e * e for e in known)) / len(known)

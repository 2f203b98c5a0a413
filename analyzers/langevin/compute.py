"""The heavy work of the Langevin analyzers, imported only when a run starts: one cached ``Experiment``
(``pipeline``) per parameter set, then the sweep, contacts and similarity results computed from it
(averages over the sampler's snapshots per temperature), and the design diagnostics. Each result also
writes its figures into the output folder, lists them as artifacts, and carries the notes a reader must
see (departures from the paper, defaults chosen).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from analyzers.base import AnalyzerResult, RunContext, result_record
from analyzers.files import atomic_write_json
from analyzers.langevin import analysis, checks, plots, sampler_health, structure
from analyzers.langevin import design as sequence_design
from analyzers.langevin.data import majority_error
from analyzers.langevin.pipeline import Experiment, load_contact_map, run_experiment
from analyzers.langevin.spec import (
    ContactsParams,
    ContactsResult,
    DesignParams,
    DesignResult,
    LangevinContacts,
    LangevinDesign,
    LangevinParams,
    LangevinSimilarity,
    LangevinSweep,
    SimilarityParams,
    SimilarityResult,
    SweepParams,
    SweepResult,
)
from schemas.run import EvidenceScale

NOTES = [
    "Contact cutoff, tempering ladder, metric thresholds, sampling lengths and the ES ensemble size are not "
    "published; they are parameters with stated defaults.",
    "Masses follow the paper's rule (minibatch noise supplies the share r of the thermostat noise), written "
    "for this integrator's one minibatch per step; the gradient variance is floored at a fraction of its "
    "median and a guard raises the floor (then all masses) when the thermal step would make SHAKE "
    "unsolvable. With mass_rule=noise-covariance the masses add a low-rank term along the minibatch noise "
    "(exact, from the per-sequence gradients), so the noise is at the share r along every direction and r "
    "needs no cap.",
    "The constrained sampler adds the Fixman term (T/2) log(w^T M^-1 w), which removes the bias of "
    "non-uniform masses on the sphere (the authors' sampler has no such term; the bias is O(1/n) in n "
    "weights).",
    "Chains from OT start on the ES sphere (the OT weights scaled by one factor, Appendix D's Q = "
    "|w_ES|^2), so the chains from ES and OT sample one distribution and R-hat over them tests "
    "equilibration.",
    "The specific heat is var(L)/T^2 of the full training loss after burn-in, around its linear trend; "
    "where the sampler has not equilibrated (low T, short runs: see equilibrated_by_temperature) it is not "
    "an equilibrium C.",
]


# What each convergence state (convergence.chain_state) says a longer run would have to show.
STATE_MEANING = {
    "metastable": "each start's chain is stationary but the starts stay in different states, so the value "
    "depends on where the chain started",
    "relaxing": "a chain still drifts, so it has reached no steady state yet",
    "equilibrated": "the starts agree, but the loss drifts across the averaging window",
}


def temperature_summary(record: dict[str, Any], burn_in_fraction: float) -> dict[str, Any]:
    """Averages over the snapshots after burn-in of one temperature's records."""
    steps = record["steps"]
    kept = [s for s in record["snapshots"] if s["step"] > burn_in_fraction * steps] or record["snapshots"][
        -1:
    ]
    energies = sorted(record.get("energies") or [(s["step"], s["train_loss"]) for s in record["snapshots"]])
    kept_energies = [(step, e) for step, e in energies if step > burn_in_fraction * steps] or energies[-1:]
    energy_steps = np.array([step for step, _ in kept_energies], dtype=float)
    train_losses = np.array([e for _, e in kept_energies])
    residuals = train_losses - train_losses.mean()
    if len(train_losses) > 2:  # C from the fluctuations around a linear trend: a slow drift is not heat
        slope, intercept = np.polyfit(energy_steps, train_losses, 1)
        residuals = train_losses - (slope * energy_steps + intercept)
    quarter = max(len(train_losses) // 4, 1)
    # Equilibration check: the loss should not drift across the averaging window (first vs last quarter).
    drift = float(train_losses[-quarter:].mean() - train_losses[:quarter].mean())
    noise = float(train_losses.std()) / math.sqrt(quarter) * math.sqrt(2) + 1e-12
    temperature = record["temperature"]
    attention = None
    if record.get("attention_count"):
        attention = (record["attention_sum"] / record["attention_count"]).numpy()  # (layers, L, L)
    return {
        "temperature": temperature,
        "mean_loss": float(train_losses.mean()),
        "loss_std": float(train_losses.std()),
        "specific_heat": float(residuals.var() / temperature**2),
        "specific_heat_raw": float(train_losses.var() / temperature**2),
        "energy_samples": len(train_losses),
        "loss_drift": drift,
        "equilibrated": bool(abs(drift) < 3.0 * noise),
        "train_error": float(np.mean([s["train_error"] for s in kept])),
        "validation_error": float(np.nanmean([s["validation_error"] for s in kept]))
        if not all(math.isnan(s["validation_error"]) for s in kept)
        else math.nan,
        "test_error": float(np.mean([s["test_error"] for s in kept])),
        # the error bar of a sampled test error: its spread over the snapshots averaged (a fluctuation, not a
        # SE)
        "test_error_std": float(np.std([s["test_error"] for s in kept])),
        "test_loss": float(np.mean([s["test_loss"] for s in kept])),
        "norm_drift": float(max(abs(s["squared_norm"] - record["start_norm"]) for s in record["snapshots"])),
        "snapshots_averaged": len(kept),
        "mean_attention": attention,
        "seconds": record["seconds"],
        "mass_guard": record.get("mass_guard", []),
        "thermostat": record.get("thermostat") or {
            "r_used": record.get("r_used"),
            "noise_amplification": record.get("noise_amplification", []),
            "kinetic_temperature_mean": record.get("kinetic_temperature"),
            "kinetic_temperature_directions": record.get("kinetic_temperature_directions", []),
            "thermalized_every_direction": record.get("thermalized_every_direction"),
        },
    }


def _scale(experiment: Experiment, name: str) -> EvidenceScale:
    params = experiment.params
    transformer = experiment.models.get("transformer")
    return EvidenceScale(
        name=name,
        parameters=float(transformer.num_parameters) if transformer else None,
        data=(
            f"{len(experiment.sequences)} {experiment.design_summary.get('source', 'designed sequences')} on "
            f"{experiment.contact_map.source}"
        ),
        description=f"{params.num_layers} block(s), d={params.embed_dim}, m={params.hidden_dim}; "
        f"{params.sampling_steps} sampler steps per temperature",
    )


def _summaries(experiment: Experiment, model: str, start: str) -> list[dict[str, Any]]:
    records = experiment.models[model].records[start]
    rows = [temperature_summary(r, experiment.params.burn_in_fraction) for r in records]
    # convergence over the chains from every start, thermalization; R-hat >= 1.1 is not equilibrated
    return sampler_health.add_sampler_health(
        rows, experiment.models[model].records, experiment.params.burn_in_fraction
    )


def _equilibrium_peak(heat: list[float], equilibrated: list[bool]) -> int:
    """Index of the largest C among the equilibrated temperatures (all of them when none is)."""
    candidates = [i for i, ok in enumerate(equilibrated) if ok] or list(range(len(heat)))
    return max(candidates, key=lambda i: heat[i])


def _largest_jump(values: list[float]) -> float:
    steps = np.diff(np.asarray(values, dtype=float))
    return float(max(steps.max(), 1e-12)) if len(steps) else math.nan


def reference_errors(run: Any) -> dict[str, list[float]]:
    """Test errors of the ES and OT weights of every reference run (seeds), the paper's error bars."""
    references = run.training.reference_metrics or [run.training.metrics]
    return {start: [float(m.get(start.lower(), {}).get("test_error", math.nan)) for m in references]
            for start in ("ES", "OT")}  # fmt: skip


def _model_curves(
    experiment: Experiment, name: str, rows: list[dict[str, Any]], temperatures: list[float]
) -> dict[str, Any]:
    """One model's curves over the temperatures (sampled from the first start), its heat-capacity peak and
    the test error from every start."""
    params = experiment.params
    heat = [row["specific_heat"] for row in rows]
    return {
        "temperatures": temperatures,
        "mean_loss": [row["mean_loss"] for row in rows],
        "specific_heat": heat,
        "train_error": [row["train_error"] for row in rows],
        "validation_error": [row["validation_error"] for row in rows],
        "test_error": [row["test_error"] for row in rows],
        "test_error_std": [row["test_error_std"] for row in rows],
        "peak_temperature": temperatures[_equilibrium_peak(heat, [row["equilibrated"] for row in rows])],
        "norm_drift": max(row["norm_drift"] for row in rows),
        "equilibrated": [row["equilibrated"] for row in rows],
        "state": [row["convergence"]["state"] for row in rows],
        "test_error_by_start": {
            begin: [temperature_summary(r, params.burn_in_fraction)["test_error"] for r in records]
            for begin, records in experiment.models[name].records.items()
        },
        "loss_drift": [row["loss_drift"] for row in rows],
        "thermostat": [row["thermostat"] for row in rows],
    }


def _ffn_over_transformer(curves: dict[str, dict[str, Any]]) -> tuple[float | None, float | None, list[int]]:
    """The FFN's heat-capacity peakedness and largest loss jump over the transformer's (None without an
    FFN; the peak ratio NaN below three temperatures where both equilibrated), and those temperatures."""
    transformer = curves["transformer"]
    if "ffn" not in curves:
        return None, None, []
    # Only temperatures where both models equilibrated: a drifting loss says nothing about the heat
    # capacity.
    both = [i for i, (a, b) in enumerate(zip(curves["ffn"]["equilibrated"], transformer["equilibrated"],
                                             strict=True)) if a and b]  # fmt: skip
    ratio = math.nan  # not computable: "inconclusive" for a claim, never a number from drifting losses
    if len(both) >= 3:
        ratio = analysis.peakedness(
            [curves["ffn"]["specific_heat"][i] for i in both]
        ) / analysis.peakedness([transformer["specific_heat"][i] for i in both])
    jump = _largest_jump(curves["ffn"]["mean_loss"]) / _largest_jump(transformer["mean_loss"])
    return ratio, jump, both


def sweep_result(experiment: Experiment, out_dir: Path, scale_name: str) -> SweepResult:
    """Loss / C / errors vs T for every model (sampled from the first start), with the sweep figure, the ES/OT
    reference error bars and the tests that decide which metrics can be vouched for."""
    params = experiment.params
    start = params.sample_from[0]
    temperatures = list(params.temperatures)
    rows_by_model = {name: _summaries(experiment, name, start) for name in experiment.models}
    curves = {
        name: _model_curves(experiment, name, rows, temperatures) for name, rows in rows_by_model.items()
    }
    references = {name: reference_errors(run) for name, run in experiment.models.items()}
    transformer = curves["transformer"]
    errors = transformer["test_error"]
    ratio, jump, both = _ffn_over_transformer(curves)
    validation = transformer["validation_error"]
    selected = (
        temperatures[int(np.nanargmin(validation))] if not all(map(math.isnan, validation)) else math.nan
    )
    plots.plot_sweep(out_dir / "sweep.png", curves, references)
    es_mean = {k: float(np.nanmean(v["ES"])) for k, v in references.items()}
    result = SweepResult(
        scale=_scale(experiment, scale_name),
        temperatures=temperatures,
        start=start,
        mean_loss_by_temperature={k: v["mean_loss"] for k, v in curves.items()},
        specific_heat_by_temperature={k: v["specific_heat"] for k, v in curves.items()},
        train_error_by_temperature={k: v["train_error"] for k, v in curves.items()},
        validation_error_by_temperature={k: v["validation_error"] for k, v in curves.items()},
        test_errors_by_model={k: v["test_error"] for k, v in curves.items()},
        test_error_std_by_model={k: v["test_error_std"] for k, v in curves.items()},
        test_error_by_start={k: v["test_error_by_start"] for k, v in curves.items()},
        test_error_by_temperature=errors,
        test_error_min_is_interior=analysis.is_interior_minimum(errors),
        test_error_min_is_interior_by_model={
            k: analysis.is_interior_minimum(v["test_error"]) for k, v in curves.items()
        },  # fmt: skip
        best_test_error_minus_es=float(min(errors) - es_mean["transformer"]),
        best_test_error_minus_es_by_model={
            k: float(min(v["test_error"]) - es_mean[k]) for k, v in curves.items()
        },
        reference_test_errors=references,
        validation_selected_temperature=selected,
        peak_temperature={k: v["peak_temperature"] for k, v in curves.items()},
        normalized_temperatures={
            k: [t / v["peak_temperature"] for t in temperatures] for k, v in curves.items()
        },
        specific_heat_peak_ratio_ffn_over_transformer=ratio,
        loss_jump_ratio_ffn_over_transformer=jump,
        max_norm_drift=max(v["norm_drift"] for v in curves.values()),
        equilibrated_by_temperature={k: v["equilibrated"] for k, v in curves.items()},
        loss_drift_by_temperature={k: v["loss_drift"] for k, v in curves.items()},
        thermostat_by_temperature={k: v["thermostat"] for k, v in curves.items()},
        trained={k: run.training.metrics for k, run in experiment.models.items()},
        design=experiment.design_summary,
        checks=_sweep_checks(experiment, temperatures, rows_by_model, references, len(both), ratio, jump),
        provenance=experiment.provenance,
        notes=list(NOTES),
        artifacts=["sweep.png"],
    )
    # The sampler's own readings (issue 12): thermalization per direction, R-hat and ESS, and their figure.
    sampler_health.add_to_sweep(result, rows_by_model, out_dir)
    return result


def baseline_error(experiment: Experiment) -> float:
    """The test error of always predicting the most frequent training residue (the 'learned anything' bar)."""
    return majority_error(experiment.splits.train, experiment.splits.test)


def _sweep_checks(
    experiment: Experiment,
    temperatures: list[float],
    rows_by_model: dict[str, list[dict[str, Any]]],
    references: dict[str, dict[str, list[float]]],
    both_equilibrated: int,
    ratio: float | None,
    jump: float | None,
) -> dict[str, Any]:
    found = checks.sweep_checks(temperatures, rows_by_model, references, baseline_error(experiment),
                                both_equilibrated, len(experiment.splits.test))
    for metric, value in (("specific_heat_peak_ratio_ffn_over_transformer", ratio),
                          ("loss_jump_ratio_ffn_over_transformer", jump)):
        if metric in found:
            found[metric] = checks.scale_ratio(found[metric], value)
    return found


def _pick_block(params: Any, attention: np.ndarray, contacts: np.ndarray) -> tuple[int, dict[str, float]]:
    separations = (params.p_at_l_min_separation, params.tolerance_min_separation, params.tolerance_delta)
    if params.attention_layer is not None:
        if not 0 <= params.attention_layer < len(attention):
            raise ValueError(f"attention_layer {params.attention_layer} not in 0..{len(attention) - 1}")
        chosen = attention[params.attention_layer]
        return params.attention_layer, analysis.contact_scores(chosen, contacts, *separations)
    block, scores = analysis.best_block(attention, contacts, *separations)
    return block, scores[block]


def _chance(params: Any, attention: np.ndarray, contacts: np.ndarray) -> dict[str, dict[str, float]]:
    """The one chance rule (``analysis.contact_chance_test``) for both metrics of one (L, L) attention map."""
    symmetric = 0.5 * (attention + attention.T)
    common = {"permutations": params.chance_permutations, "seed": params.seed}
    return {
        "p_at_l": analysis.contact_chance_test(
            symmetric, contacts, "p_at_l", params.p_at_l_min_separation, **common
        ),
        "tolerance_precision": analysis.contact_chance_test(
            symmetric,
            contacts,
            "tolerance",
            params.tolerance_min_separation,
            params.tolerance_delta,
            **common,
        ),
    }


def contact_untestable(
    chance: list[dict[str, dict[str, float]]],
    trained_chance: dict[str, dict[str, dict[str, float]]],
    temperatures: list[float],
    significance: float,
) -> dict[str, str]:
    """Which contact metrics cannot be vouched for, and why: a temperature ratio needs its metric's best
    temperature to beat chance (p below ``significance`` after Bonferroni over the temperatures, since the
    best of several was picked); an OT-minus-ES difference needs one of the two to beat chance."""
    untestable: dict[str, str] = {}
    for metric, ratio, curve, difference in (
        ("tolerance_precision", "best_contact_temperature_over_best_error_temperature",
         "tolerance_precision_by_temperature", "ot_minus_es_tolerance_precision"),
        ("p_at_l", "best_p_at_l_temperature_over_best_error_temperature", "p_at_l_by_temperature",
         "ot_minus_es_p_at_l"),
    ):  # fmt: skip
        values = [row[metric]["precision"] for row in chance]
        best = int(np.argmax(values))
        test = chance[best][metric]
        corrected = min(1.0, test["p_value"] * len(temperatures))
        if not corrected < significance:
            why = (
                f"{metric} at its best temperature (T={temperatures[best]:g}: {test['precision']:.3f}) does "
                f"not beat shuffled contacts (chance {test['chance']:.3f}, p = {test['p_value']:.3g}, "
                f"x{len(temperatures)} temperatures = {corrected:.3g} >= {significance:g})"
            )
            untestable[ratio] = untestable[curve] = why
        trained = {start: trained_chance[start][metric] for start in ("ES", "OT") if start in trained_chance}
        if trained and not any(min(1.0, 2 * t["p_value"]) < significance for t in trained.values()):
            found = ", ".join(
                f"{start}: {t['precision']:.3f} vs chance {t['chance']:.3f}, p = {t['p_value']:.3g}"
                for start, t in trained.items()
            )
            untestable[difference] = (
                f"neither ES nor OT attention beats shuffled contacts on {metric} ({found})"
            )
    return untestable


def _contacts_rule(params: Any, num_contacts: int) -> str:
    """How the contact metrics are read, for the result: P@L, the tolerant precision, chance and the block."""
    block = ("the best-matching one (tolerant metric)" if params.attention_layer is None
             else f"block {params.attention_layer}")
    return (
        f"P@L (Sect. III.3): the top L={num_contacts} pairs with |i-j| >= {params.p_at_l_min_separation}; "
        f"tolerant: the top L pairs with |i-j| > {params.tolerance_min_separation}, a hit when within "
        f"Delta={params.tolerance_delta} (both indices) of a true contact with |i-j| > the same separation; "
        "attention symmetrized, averaged over the test sequences and the snapshots after burn-in; chance: "
        f"contact labels shuffled among pairs of the same separation ({params.chance_permutations} shuffles, "
        f"one-sided p, Bonferroni over temperatures); the block is {block}"
    )


def contacts_result(experiment: Experiment, out_dir: Path, scale_name: str) -> ContactsResult:
    """Attention vs contacts per temperature (best block) and for the ES / OT weights, each against the one
    chance rule, with figures."""
    params = experiment.params
    contacts = experiment.contact_map.contacts
    run = experiment.models["transformer"]
    rows = _summaries(experiment, "transformer", params.sample_from[0])
    temperatures = list(params.temperatures)
    blocks, p_at_l, tolerant = [], [], []
    # a precision means something only against shuffled contacts
    chance: list[dict[str, dict[str, float]]] = []
    for row in rows:
        block, scores = _pick_block(params, row["mean_attention"], contacts)
        blocks.append(block)
        p_at_l.append(scores["p_at_l"])
        tolerant.append(scores["tolerance_precision"])
        chance.append(_chance(params, row["mean_attention"][block], contacts))
    trained, trained_chance = {}, {}
    for start, attention in run.trained_attention.items():
        block, scores = _pick_block(params, attention, contacts)
        trained[start] = {**scores, "block": float(block)}
        trained_chance[start] = _chance(params, attention[block], contacts)
    errors = [row["test_error"] for row in rows]
    best_error = int(np.argmin(errors))
    best_tolerant, best_p = int(np.argmax(tolerant)), int(np.argmax(p_at_l))
    show = rows[best_tolerant]["mean_attention"][blocks[best_tolerant]]
    symmetric = 0.5 * (show + show.T)
    plots.plot_attention(
        out_dir / "attention_vs_contacts.png", symmetric, contacts,
        f"mean attention, block {blocks[best_tolerant]}, T={temperatures[best_tolerant]:g}",
    )  # fmt: skip
    plots.plot_precision(
        out_dir / "precision_vs_temperature.png", temperatures,
        {"p_at_l": p_at_l, "tolerance_precision": tolerant}, trained,
    )  # fmt: skip
    np.save(out_dir / "mean_attention.npy", np.stack([row["mean_attention"] for row in rows]))
    untestable = contact_untestable(chance, trained_chance, temperatures, params.significance)
    trained_errors = {start.upper(): float(values.get("test_error", math.nan))
                      for start, values in run.training.metrics.items() if isinstance(values, dict)}
    return ContactsResult(
        chance_by_temperature=chance,
        trained_chance=trained_chance,
        checks=checks.contacts_checks(
            temperatures, rows, p_at_l, tolerant, len(contacts), untestable, trained,
            baseline_error(experiment), trained_errors, len(experiment.splits.test),
        ),  # fmt: skip
        scale=_scale(experiment, scale_name),
        temperatures=temperatures,
        p_at_l_by_temperature=p_at_l,
        tolerance_precision_by_temperature=tolerant,
        best_block_by_temperature=blocks,
        test_error_by_temperature=errors,
        best_contact_temperature_over_best_error_temperature=temperatures[best_tolerant]
        / temperatures[best_error],
        best_p_at_l_temperature_over_best_error_temperature=temperatures[best_p] / temperatures[best_error],
        trained_scores=trained,
        ot_minus_es_tolerance_precision=trained["OT"]["tolerance_precision"]
        - trained["ES"]["tolerance_precision"],
        ot_minus_es_p_at_l=trained["OT"]["p_at_l"] - trained["ES"]["p_at_l"],
        rule=_contacts_rule(params, len(contacts)),
        provenance=experiment.provenance,
        notes=list(NOTES),
        artifacts=["attention_vs_contacts.png", "precision_vs_temperature.png", "mean_attention.npy"],
    )


def similarity_result(experiment: Experiment, out_dir: Path, scale_name: str) -> SimilarityResult:
    """Per-layer q at the temperature of the lowest mean test error, with the histogram figure."""
    params = experiment.params
    start = params.sample_from[0]
    chosen, mean_q, normalization, other, histograms, counts = {}, {}, {}, {}, {}, {}
    rows_by_model = {name: _summaries(experiment, name, start) for name in experiment.models}
    for name, run in experiment.models.items():
        rows = rows_by_model[name]
        best = int(np.argmin([row["test_error"] for row in rows]))
        record = run.records[start][best]
        snapshots = (
            np.stack([w.numpy() for w in record["weights"]]) if record["weights"] else np.zeros((0, 0))
        )
        q = analysis.layer_similarities(snapshots, run.layer_slices) if len(snapshots) > 1 else {}
        chosen[name] = float(params.temperatures[best])
        counts[name] = len(snapshots)
        mean_q[name] = {layer: float(values.mean()) for layer, values in q.items() if len(values)}
        norm_values = [v for layer, v in mean_q[name].items() if analysis.is_normalization_layer(layer)]
        other_values = [v for layer, v in mean_q[name].items() if not analysis.is_normalization_layer(layer)]
        normalization[name] = float(np.mean(norm_values)) if norm_values else math.nan
        other[name] = float(np.mean(other_values)) if other_values else math.nan
        histograms[name] = q
    plots.plot_similarity(out_dir / "similarity.png", histograms, "T with the lowest test error")
    return SimilarityResult(
        scale=_scale(experiment, scale_name),
        temperature_by_model=chosen,
        mean_q_by_layer=mean_q,
        normalization_mean_q=normalization,
        other_mean_q=other,
        normalization_q_minus_other_q=normalization["transformer"] - other["transformer"],
        snapshots=counts,
        checks=checks.similarity_checks(list(params.temperatures), rows_by_model, baseline_error(experiment),
                                        histograms, counts, analysis.is_normalization_layer,
                                        len(experiment.splits.test)),
        provenance=experiment.provenance,
        notes=list(NOTES),
        artifacts=["similarity.png"],
    )


def _run(params: LangevinParams, ctx: RunContext, models: list[str] | None) -> Experiment:
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    experiment = run_experiment(params, lambda fraction, message: ctx.report(fraction, message), models, ctx)
    ctx.report(0.95, "analysing the samples: chance tests, error bars, plots")  # what the last stretch does
    ctx.enter_stage("analysis")
    return experiment


def _finish(result: AnalyzerResult, ctx: RunContext) -> None:
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(ctx.out_dir / "metrics.json", result_record(result))
    result.artifacts.append("metrics.json")
    ctx.report(1.0, "done")


def sweep(analyzer: LangevinSweep, params: SweepParams, ctx: RunContext) -> SweepResult:
    experiment = _run(params, ctx, None)
    result = sweep_result(experiment, ctx.out_dir, analyzer.scale_name(params))
    _finish(result, ctx)
    return result


def contacts(analyzer: LangevinContacts, params: ContactsParams, ctx: RunContext) -> ContactsResult:
    experiment = _run(params, ctx, ["transformer"])
    result = contacts_result(experiment, ctx.out_dir, analyzer.scale_name(params))
    _finish(result, ctx)
    return result


def similarity(analyzer: LangevinSimilarity, params: SimilarityParams, ctx: RunContext) -> SimilarityResult:
    experiment = _run(params, ctx, None)
    result = similarity_result(experiment, ctx.out_dir, analyzer.scale_name(params))
    _finish(result, ctx)
    return result


def design(analyzer: LangevinDesign, params: DesignParams, ctx: RunContext) -> DesignResult:
    contact_map = load_contact_map(params, ctx.cache_dir, offline=ctx.offline)  # type: ignore[arg-type]
    composition = sequence_design.encode(contact_map.sequence)
    started = time.perf_counter()
    report = sequence_design.simulated_tempering(
        contact_map.contacts, sequence_design.interaction_matrix(params.interaction_seed), composition,
        params.num_sequences, params.design_temperatures, sweeps_between=params.design_sweeps_between,
        burn_in_sweeps=params.design_burn_in_sweeps, seed=params.seed, num_chains=params.num_chains,
        progress=ctx.report,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    sequence_design.write_fasta(ctx.out_dir / "designed.fasta", report.sequences)
    summary = report.summary()
    plots.plot_design(ctx.out_dir / "design.png", summary)
    energies = np.asarray(report.mean_energy)
    preset = next(
        (k for k, v in analyzer.scales.items() if v["num_sequences"] == params.num_sequences), "custom"
    )
    result = DesignResult(
        scale=EvidenceScale(name=preset, data=f"{params.num_sequences} sequences on {contact_map.source}"),
        num_sequences=len(report.sequences),
        temperatures=report.temperatures,
        mean_energy_by_temperature=report.mean_energy,
        acceptance_swap_by_temperature=report.acceptance_swap,
        acceptance_temperature_moves=report.acceptance_temperature,
        energy_decreases_with_temperature=bool((np.diff(energies) < 0).all()),
        composition_exact=bool((np.sort(report.sequences, axis=1) == np.sort(composition)).all()),
        mean_pairwise_identity=report.mean_pairwise_identity,
        site_entropy=report.site_entropy,
        samples_equilibrated=bool(summary.get("samples_equilibrated", False)),
        sample_minus_level_energy=float(
            summary.get("sample_minus_level_energy", math.nan)  # type: ignore[arg-type]
        ),
        samples_stationary=bool(summary.get("samples_stationary", False)),
        consecutive_identity=report.consecutive_identity,
        sequences_per_second=len(report.sequences) / seconds,
        mean_sample_energy=float(report.sample_energies.mean()),
        provenance={
            "structure_source": contact_map.source,
            "contact_map_digest": contact_map.digest(),
            "seed": params.seed,
            "device": "cpu",
            "num_chains": report.num_chains,
            "swaps_attempted": report.swaps_attempted,
            "seconds": seconds,
        },
        notes=[
            "The tempering ladder and burn-in are not published; the defaults are calibrated on 1UBI to the "
            "authors' identity and site entropy (a finite-time design: longer burn-in concentrates the set).",
            "Every chain at the lowest temperature is sampled at fixed ticks; consecutive_identity shows "
            "how much of a chain's memory survives between its samples (mean_pairwise_identity is between "
            "all sequences).",
            *([] if params.structure_file or params.pdb_id else [f"Structure: {structure.SHIPPED_NAME}."]),
        ],
        artifacts=["designed.fasta", "design.png"],
    )
    _finish(result, ctx)
    return result

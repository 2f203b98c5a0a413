"""The heavy work of the depth analyzers, imported only when a run starts.

``probe`` (``depth.probe``) resolves, loads and probes one model and writes its metrics and plots
(``probe_one``, also used by ``kb probe``); ``probe_model`` probes a loaded model on a list of sequences
(batched by length) and ``summarize`` turns the per-layer lists into the metrics claims reference;
``uncertainty.probe_estimates`` gives each its standard error across sequences (``probe_checks``). With
``models`` (several checkpoints of one family) ``probe`` probes each and adds the trend against depth.

The depth sweep (``depth.sweep``) lives in ``sweep.py``: it trains one ``EsmForMaskedLM`` per depth at a
parameter and token budget, decides convergence, and probes each with the probes above.
"""

from __future__ import annotations

import json
import math
import platform
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from analyzers.base import (
    MetricCheck,
    Precondition,
    RunContext,
    extreme_interval,
    interval_quantile,
    too_few_units,
)
from analyzers.depth import plots, tiny
from analyzers.depth.batches import check_lengths, encode
from analyzers.depth.catalog import MODELS
from analyzers.depth.data import (
    DESIGNED_DESCRIPTION,
    DESIGNED_FASTA,
    Record,
    attach_structures,
    file_sha256,
    length_batches,
    read_fasta,
    read_structures,
    split_records,
    unigram_accuracy,
)
from analyzers.depth.loading import LoadedModel, OutOfMemory, ResolvedModel, check_device, load_model
from analyzers.depth.probes import ProbeAccumulator, ProbeOptions, clean_pass, reshape_contributions
from analyzers.depth.skips import skip_probes
from analyzers.depth.spec import (
    DepthProbe,
    DepthProbeParams,
    DepthProbeResult,
    untrained,
)
from analyzers.depth.uncertainty import family_trend, probe_estimates
from analyzers.files import json_safe
from analyzers.progress import MAIN_STAGE, first_use_stage
from schemas.run import EvidenceScale


def probe_model(
    loaded: LoadedModel,
    records: list[Record],
    options: ProbeOptions,
    batch_size: int = 8,
    mask_fraction: float = 0.15,
    seed: int = 0,
    report: Callable[[float, str], None] = lambda fraction, message: None,
    noise_level: float = 0.5,
) -> dict[str, Any]:
    """Every probe over ``records``; returns the per-layer lists (``summarize`` makes the metrics).

    Masked LMs see ``mask_fraction`` of their residues masked, diffusion LMs (DPLM) ``noise_level`` (the
    per-residue masking probability t/T of their training at step t), causal LMs nothing."""
    adapter, device = loaded.adapter, next(loaded.model.parameters()).device
    accumulator = ProbeAccumulator(adapter.num_layers, adapter.objective, adapter.pre_ln)
    masking = {"masked": mask_fraction, "diffusion": noise_level}.get(adapter.objective, 0.0)
    batches = length_batches(records, batch_size)
    for index, batch_records in enumerate(batches):
        batch = encode(batch_records, loaded.tokenizer, loaded.input_format, masking, seed).to(device)
        try:
            record = clean_pass(loaded.model, adapter, batch, accumulator, options)
            if options.skips:
                skip_probes(loaded.model, adapter, record, batch, accumulator, options)
        except torch.OutOfMemoryError as error:
            raise OutOfMemory(
                f"out of memory on {device} probing a batch of {batch.size} sequences of "
                f"{batch.input_ids.shape[1]} "
                f"tokens: lower --batch-size (now {batch_size}) or --replay-tokens "
                f"(now {options.replay_tokens or 'auto'}), or drop long sequences with --max-length"
            ) from error
        del record
        shape = f"{batch.size} x {batch.input_ids.shape[1]}"
        report((index + 1) / len(batches), f"batch {index + 1}/{len(batches)} ({shape})")
    layers = accumulator.finish()
    layers["per_sequence"] = accumulator.rows()  # tensors for the standard errors: popped before any JSON
    reshape_contributions(layers)
    for name in ("deletion_nll", "baseline_nll"):
        if name in layers:
            values = layers.pop(name)
            perplexity_name = name.replace("_nll", "_perplexity")
            layers[perplexity_name] = (
                [math.exp(v) for v in values] if isinstance(values, list) else math.exp(values)
            )
    layers["num_sequences"] = len(records)
    over = (
        " over amino acids (probability summed over 3Di letters)"
        if adapter.residue_onehot is not None
        else ""
    )
    layers["evaluation"] = (
        f"masked positions (seeded {masking:.0%}){over}" if adapter.objective == "masked" and masking > 0 else
        f"masked positions at diffusion noise level {masking:g} (step {round(masking * 500)} of 500)"
        if adapter.objective == "diffusion" else
        "next-token prediction" if adapter.objective == "causal" else "all residue positions (nothing masked)"
    )
    return layers


def _mean(values: list[float]) -> float:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    return sum(finite) / len(finite) if finite else float("nan")


def late_half_share(kl: list[float]) -> float:
    """Share of the logit-lens KL decrease ``KL_0 - KL_L`` made by layers ``L//2 .. L-1``."""
    num_layers = len(kl) - 1
    total = kl[0] - kl[-1]
    if not num_layers or abs(total) < 1e-12:
        return float("nan")
    return (kl[num_layers // 2] - kl[-1]) / total


def _effect_on_later_layers(heatmap: list[list[float]], rows: range) -> float:
    """Mean of ``heatmap[s][l]`` over ``s`` in ``rows`` and ``l > s`` (a layer's effect on later
    computation)."""
    values = [heatmap[s][layer] for s in rows for layer in range(s + 1, len(heatmap))]
    return _mean(values)


def summarize(layers: dict[str, Any]) -> dict[str, float]:
    """Summary metrics a claim can reference, from the per-layer lists. The early half is layers
    ``0 .. L//2 - 1``, the late half ``L//2 .. L-1``."""
    num_layers = layers["num_layers"]
    half = num_layers // 2
    early, late = range(0, half), range(half, num_layers)
    nan = float("nan")
    summary: dict[str, float] = {
        "late_half_kl_drop_fraction": late_half_share(layers["logit_lens_kl"]),
        "late_half_kl_drop_fraction_masked": (
            late_half_share(layers["logit_lens_kl_masked"]) if "logit_lens_kl_masked" in layers else nan
        ),
        "final_layer_erank": layers["erank"][-1],
        "erank_ratio": layers["erank"][-1] / layers["erank"][0] if layers["erank"][0] else nan,
        "stable_rank_ratio": layers["stable_rank"][-1] / layers["stable_rank"][0]
        if layers["stable_rank"][0]
        else nan,
    }
    entropy = layers.get("attention_entropy_mean") or []
    summary["attention_entropy_last_over_first"] = entropy[-1] / entropy[0] if entropy and entropy[0] else nan
    effects = layers.get("skip_output_effect")
    if effects:
        summary["mean_skip_output_effect_early_half"] = _mean([effects[i] for i in early])
        summary["mean_skip_output_effect_late_half"] = _mean([effects[i] for i in late])
        early_mean = summary["mean_skip_output_effect_early_half"]
        summary["late_to_early_skip_effect_ratio"] = (
            summary["mean_skip_output_effect_late_half"] / early_mean if early_mean else nan
        )
        summary["early_half_effect_on_later_layers"] = _effect_on_later_layers(layers["skip_heatmap"], early)
        summary["late_half_effect_on_later_layers"] = _effect_on_later_layers(layers["skip_heatmap"], late)
    if "baseline_perplexity" in layers:
        base_ppl, base_acc = layers["baseline_perplexity"], layers["baseline_accuracy"]
        summary["baseline_perplexity"] = base_ppl
        summary["baseline_accuracy"] = base_acc
        summary["max_deletion_perplexity_increase"] = max(p - base_ppl for p in layers["deletion_perplexity"])
        summary["mean_deletion_accuracy_drop_late_half"] = _mean(
            [base_acc - layers["deletion_accuracy"][i] for i in late]
        )
    return summary


#: Metrics pooled over every sequence's tokens at once (one token matrix): no standard error across sequences;
#: their per-sequence counterparts (``stable_rank_retention``, ``erank_retention_by_layer``) have one.
POOLED = ("final_layer_erank", "erank_ratio", "stable_rank_ratio")
#: Metrics of a family run (several checkpoints): their checks are made by ``family_result``.
FAMILY = ("late_to_early_skip_effect_ratio_by_model", "depth_inefficiency_trend",
          "late_half_kl_drop_fraction_min_over_models", "late_to_early_dependence_ratio_max_over_models")
#: Family metrics over every checkpoint: the per-checkpoint metric, and whether the bound is the largest.
EVERY_MODEL = {"late_half_kl_drop_fraction_min_over_models": ("late_half_kl_drop_fraction", False),
               "late_to_early_dependence_ratio_max_over_models": ("late_to_early_dependence_ratio", True)}


def learned_precondition(accuracy: float | None, unigram: float, stderr: float | None = None,
                         units: int | None = None) -> Precondition:
    """The model learned: its accuracy beats always predicting the most frequent residue of the probed
    sequences by more than ``interval_quantile(units)`` (t over the ``units`` sequences) standard errors
    across sequences; with no standard error or fewer than ``MIN_UNITS`` sequences it is unresolved (issue 35:
    a margin of 2 SE over 8 sequences is a t(7) test at 2, not 2.36)."""
    if accuracy is None or not math.isfinite(accuracy):
        return Precondition(name="learned", passed=None, detail="no masked or next-token accuracy measured")
    quantile = interval_quantile(units)
    if quantile is None or stderr is None or not math.isfinite(stderr):
        why = "no standard error" if quantile is not None else too_few_units(units, "sequences")
        return Precondition(name="learned", passed=None,
                            detail=f"accuracy {accuracy:.4f} vs {unigram:.4f}: {why}")
    margin = quantile * stderr
    beats = accuracy - unigram > margin
    verb = "learned" if beats else "did not learn"
    return Precondition(name="learned", passed=beats, detail=f"the model {verb} beyond the unigram baseline "
                        f"(accuracy {accuracy:.4f} vs {unigram:.4f}, t({(units or 0) - 1}) x SE = "
                        f"{margin:.4f} over {units} sequences)")


def probe_checks(accuracy: float | None, unigram: float, estimates: dict[str, tuple[Any, Any]] | None = None,
                 units: int | None = None) -> dict[str, MetricCheck]:
    """Every probe metric rests on the model having learned, and has the jackknife standard error across the
    ``units`` sequences of ``estimates`` (per element for the per-layer lists); the pooled rank metrics have
    none."""
    estimates = estimates or {}
    accuracy_error = estimates.get("baseline_accuracy", (None, None))[1]
    learned = learned_precondition(
        accuracy, unigram, accuracy_error if isinstance(accuracy_error, float) else None, units
    )
    n = "jackknife standard error across the probed sequences"
    checks: dict[str, MetricCheck] = {}
    for name in DepthProbe.metrics:
        if name in FAMILY:
            continue
        stderr = estimates.get(name, (None, None))[1]
        if isinstance(stderr, list):
            checks[name] = MetricCheck(source="sequences", preconditions=[learned], note=n)
            for index, error in enumerate(stderr):
                checks[f"{name}.{index}"] = MetricCheck(
                    stderr=finite_or_none(error), source="sequences", units=units, note=n
                )
            continue
        note = "pooled over every sequence's tokens: no standard error" if name in POOLED else n
        checks[name] = MetricCheck(stderr=finite_or_none(stderr), source="sequences", units=units,
                                   preconditions=[learned], note=note)
    return checks


def finite_or_none(value: Any) -> float | None:
    """A number for a metric, or None where it is missing or not finite (NaN/inf are not strict JSON)."""
    return float(value) if value is not None and math.isfinite(value) else None


def _metric_value(value: Any) -> float | list[float | None] | None:
    """``finite_or_none`` of a number, element-wise of a per-layer list."""
    return [finite_or_none(v) for v in value] if isinstance(value, list) else finite_or_none(value)


def resolve_spec(
    model: str, seed: int, report: Any = lambda f, m: None, *, cache_dir: Path
) -> tuple[str | ResolvedModel, list[str]]:
    """A built-in name becomes its trained folder (trained on first use, kept under ``cache_dir``);
    notes say what it is."""
    if model in tiny.BUILTINS:
        folder = tiny.trained_tiny_esm(model, seed=seed, report=report, cache=cache_dir / "depth")
        return ResolvedModel(model, folder, "builtin"), [tiny.describe(model)]
    if model.startswith("builtin:"):
        raise ValueError(f"unknown built-in model {model!r}; built-ins: {', '.join(tiny.BUILTINS)}")
    return model, []


def select_records(
    fasta: str | None, max_length: int | None, max_sequences: int, structure_fasta: str | None = None
) -> tuple[Path, list[Record], list[str]]:
    """The sequences to probe (with their 3Di strings when ``structure_fasta`` is given) and notes on
    where they come from."""
    notes: list[str] = []
    path = Path(fasta) if fasta else DESIGNED_FASTA
    records = read_fasta(path, max_length=max_length)
    if path == DESIGNED_FASTA:
        records = split_records(records)[1]
        notes.append(f"sequences: held-out chains of the shipped {DESIGNED_DESCRIPTION}")
    if not records:
        raise ValueError(f"{path}: no sequence left after the length filter (--max-length {max_length})")
    records = records[:max_sequences]
    if structure_fasta is not None:
        records = attach_structures(records, read_structures(structure_fasta), structure_fasta)
        notes.append(f"3Di structure strings from {Path(structure_fasta).name}")
    return path, records, notes


def probe_one(params: DepthProbeParams, ctx: RunContext, out_dir: Path, title: str = "") -> DepthProbeResult:
    """Load, probe and write ``depth_metrics.json`` and plots into ``out_dir``; the typed result.

    Built-in models are trained into ``ctx.cache_dir`` (kept) or, without one, a scratch folder
    (trained again next time); imported models are looked up there too."""
    with tempfile.TemporaryDirectory(prefix="kb-depth-") as scratch:
        return _probe_one(
            params, ctx, out_dir, title, Path(ctx.cache_dir) if ctx.cache_dir else Path(scratch)
        )


def _model_notes(params: DepthProbeParams, loaded: LoadedModel) -> list[str]:
    """What the result must say about how this model was probed (post-LN, SaProt without structure,
    diffusion noise, scaled residuals); a ``ValueError`` for structure tokens a model cannot take."""
    if params.structure_fasta is not None and loaded.input_format != "saprot":
        raise ValueError(f"structure_fasta given, but {params.model} takes no structure tokens (SaProt does)")
    notes = []
    if not loaded.adapter.pre_ln:
        notes.append(
            "post-LN model: the residual decomposition (contributions, sublayer skips) is not defined"
        )
    if loaded.input_format == "saprot" and params.structure_fasta is None:
        notes.append("SaProt fed residues as '<aa>#' (structure tokens unknown)")
    if loaded.adapter.objective == "diffusion":
        notes.append(f"diffusion LM probed at noise level {params.noise_level:g} (residues masked with that "
                     f"probability, diffusion step {round(params.noise_level * 500)} of 500)")
    if loaded.adapter.residual_scale != 1.0:
        notes.append(
            f"residual branches divided by {loaded.adapter.residual_scale:.4g} inside each layer (ESM-C); "
            "contributions are of the scaled updates the residual stream receives"
        )
    return notes


def _probe_provenance(
    params: DepthProbeParams, loaded: LoadedModel, fasta: Path, num_sequences: int
) -> dict[str, Any]:
    """The model's provenance with the data, seed and device the probes ran on (a built-in's training too)."""
    provenance = {
        **loaded.provenance,
        "data": str(fasta),
        "data_hash": file_sha256(fasta),
        "num_sequences": num_sequences,
        "seed": params.seed,
        "python": platform.python_version(),
        "gpu_name": torch.cuda.get_device_name(params.device) if params.device.startswith("cuda") else None,
    }
    if loaded.resolved.source == "builtin":
        provenance["training"] = json.loads(
            (loaded.resolved.folder / "training.json").read_text(encoding="utf-8")
        )
    return provenance


def _probe_one(
    params: DepthProbeParams, ctx: RunContext, out_dir: Path, title: str, cache: Path
) -> DepthProbeResult:
    check_device(params.device)
    torch.manual_seed(params.seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx.report(0.0, f"preparing {params.model}")
    spec, notes = resolve_spec(
        params.model, params.seed, lambda f, m: ctx.report(0.3 * f, m), cache_dir=cache
    )
    fasta, records, data_notes = select_records(
        params.fasta, params.max_length, params.max_sequences, params.structure_fasta
    )
    notes += data_notes
    ctx.report(0.3, f"loading {params.model}")
    loaded: LoadedModel = load_model(
        spec, params.device, params.dtype, params.trust_remote_code, allow_download=not ctx.offline,
        cache_dir=ctx.cache_dir,
    )
    check_lengths(records, loaded.tokenizer, loaded.input_format, loaded.adapter.max_tokens, params.model)
    notes += _model_notes(params, loaded)
    options = ProbeOptions(
        top_k=params.top_k, skips=params.skips, sublayer_skips=params.sublayer_skips, future=params.future,
        replay_tokens=params.replay_tokens,
    )
    layers = probe_model(
        loaded, records, options, params.batch_size, params.mask_fraction, params.seed,
        lambda f, m: ctx.report(0.35 + 0.6 * f, f"{params.model}: {m}"), params.noise_level,
    )
    notes += layers.pop("notes", [])
    estimates = probe_estimates(layers.pop("per_sequence"), loaded.adapter.num_layers)
    # the jackknife's full-sample values equal summarize's (a test checks it); the new metrics come from it
    # only
    summary: dict[str, Any] = {**{name: value for name, (value, _) in estimates.items()}, **summarize(layers)}
    metrics_path = out_dir / "depth_metrics.json"
    errors = {name: error for name, (_, error) in estimates.items()}
    metrics_path.write_text(
        json.dumps(
            json_safe({"model": params.model, **summary, "stderr": errors, "layers": layers}),
            indent=2,
            allow_nan=False,
        ),
        encoding="utf-8",
    )
    artifacts = [metrics_path.name, *plots.write_plots(layers, out_dir, title)]
    card = MODELS.get(loaded.resolved.model_id)
    provenance = _probe_provenance(params, loaded, fasta, len(records))
    parameters = float(loaded.provenance["num_parameters"])
    nan = float("nan")
    ctx.report(1.0, "done")
    return DepthProbeResult(
        model=params.model,
        num_layers=loaded.adapter.num_layers,
        **{name: _metric_value(summary.get(name, nan)) for name in DepthProbe.metrics if name not in FAMILY},
        checks=probe_checks(
            summary.get("baseline_accuracy"), unigram_accuracy(records), estimates, len(records)
        ),
        layers=json_safe(layers),
        scale=EvidenceScale(
            name="custom",
            parameters=parameters,
            data=f"{len(records)} sequences from {fasta.name}",
            description=card.family if card else None,
        ),
        artifacts=artifacts,
        provenance=provenance,
        notes=notes,
    )


def train_first(params: DepthProbeParams, ctx: RunContext) -> RunContext:
    """Train the built-ins the run needs that the cache lacks, each as its own first-use stage (the first 30 %
    of the bar), then enter the run's own stage; the context the probes report through (the rest of the bar).
    Without a cache folder nothing outlives the run: the probe trains in its scratch folder, one stage."""
    if ctx.cache_dir is None:
        return ctx
    pending = untrained(params, Path(ctx.cache_dir))
    for index, model in enumerate(pending):
        share = ctx.within(0.3 * index / len(pending), 0.3 * (index + 1) / len(pending))
        share.enter_stage(first_use_stage(f"training {model}"))
        tiny.trained_tiny_esm(
            model, seed=params.seed, report=share.report, cache=Path(ctx.cache_dir) / "depth"
        )
    if not pending:
        return ctx
    ctx.enter_stage(MAIN_STAGE)
    return ctx.within(0.3, 1.0)


def probe(analyzer: DepthProbe, params: DepthProbeParams, ctx: RunContext) -> DepthProbeResult:
    """``depth.probe``: probe one model (or each of ``models``, one sub-folder each) into ``ctx.out_dir``;
    each model's report fills its share of the bar, so the bar never moves back at the next model."""
    ctx = train_first(params, ctx)
    if params.models:
        results = []
        for index, model in enumerate(params.models):
            folder = ctx.out_dir / model.replace("/", "--").replace(":", "-")
            share = ctx.within(index / len(params.models), (index + 1) / len(params.models))
            one = probe_one(
                params.model_copy(update={"model": model, "models": []}), share, folder, title=model
            )
            one.artifacts = [f"{folder.name}/{name}" for name in one.artifacts]
            results.append(one)
        result = family_result(results)
    else:
        result = probe_one(params, ctx, ctx.out_dir)
    result.scale.name = analyzer.scale_name(params)
    return result


def family_members(results: list[DepthProbeResult], metric: str, positive: bool = True,
                   use: str = "the trend") -> Precondition:
    """Every checkpoint of a family gives ``use`` a value of ``metric`` (positive where its log is taken) with
    a standard error over enough sequences and its own preconditions passed. A member that fails any of these
    fails the precondition, named, rather than being left out (issue 35: no silent drops)."""
    bad = []
    for one in results:
        value, check = getattr(one, metric), one.checks.get(metric) or MetricCheck()
        failing = [c for c in check.preconditions if c.passed is not True]
        what = "ratio" if positive else metric  # the trend's logs are of a ratio
        if value is None or not math.isfinite(value):
            bad.append(f"{one.model}: no {what}")
        elif positive and value <= 0:
            bad.append(f"{one.model}: ratio {value:.3g}, log undefined")
        elif check.stderr is None or not math.isfinite(check.stderr) or check.stderr <= 0:
            bad.append(f"{one.model}: {what} {value:.3g} has no standard error")
        elif interval_quantile(check.units) is None:
            bad.append(f"{one.model}: {too_few_units(check.units, check.source)}")
        elif failing:
            bad.append(f"{one.model}: " + "; ".join(c.detail or c.name for c in failing))
    detail = (
        (f"member left out of {use}: " + "; ".join(bad))
        if bad
        else f"all {len(results)} checkpoints count"
    )
    return Precondition(name="every member", passed=not bad, detail=detail)


def every_model_bounds(results: list[DepthProbeResult]) -> tuple[dict[str, Any], dict[str, MetricCheck]]:
    """The family's bounds over every checkpoint (``EVERY_MODEL``): the smallest (largest) member's value and
    the interval of that bound from all members' intervals (``extreme_interval``, Bonferroni over the
    members), so "in every model" is settled only when every member is resolved past the threshold, and one
    member resolved on the other side refutes it. A member without a value or standard error, or whose model
    did not learn, fails the bound's *every member* precondition, named."""
    values: dict[str, Any] = {}
    checks: dict[str, MetricCheck] = {}
    for name, (metric, largest) in EVERY_MODEL.items():
        word = "largest" if largest else "smallest"
        members = family_members(results, metric, positive=False, use=f"the {word} over every model")
        parts = [(getattr(r, metric), r.checks[metric].stderr, r.checks[metric].units) for r in results]
        values[name] = (max if largest else min)(v for v, _, _ in parts) if members.passed else None
        checks[name] = MetricCheck(
            interval=extreme_interval(parts, largest=largest) if members.passed else None,
            source="sequences", units=min(u or 0 for _, _, u in parts) if members.passed else None,
            preconditions=[members], derived_from=[f"{metric}_by_model"],
            note=f"the {word} of {len(results)} checkpoints' {metric}; each member's jackknife interval, "
            "Bonferroni-corrected over the members")
    return values, checks


def family_result(results: list[DepthProbeResult]) -> DepthProbeResult:
    """One result for several checkpoints of a family: the deepest one's metrics and layers, each checkpoint's
    ratio and KL share (with their standard errors and learned preconditions) and the trend against depth."""
    deepest = max(results, key=lambda r: r.num_layers)
    ratio, share = "late_to_early_skip_effect_ratio", "late_half_kl_drop_fraction"
    dependence = "late_to_early_dependence_ratio"
    checks = dict(deepest.checks)
    learned = [p for r in results for p in r.checks[ratio].preconditions]
    for name in (ratio, share, dependence):
        checks[f"{name}_by_model"] = MetricCheck(source="sequences", preconditions=learned,
                                                 note="each checkpoint's jackknife standard error")
        for index, one in enumerate(results):
            own = one.checks.get(name) or MetricCheck(preconditions=learned)
            checks[f"{name}_by_model.{index}"] = MetricCheck(
                stderr=own.stderr, source="sequences", units=own.units, preconditions=own.preconditions)
    bounds, bound_checks = every_model_bounds(results)
    checks |= bound_checks
    ratios = [r.late_to_early_skip_effect_ratio for r in results]
    trend, stderr = family_trend(
        [r.num_layers for r in results], ratios, [r.checks[ratio].stderr for r in results]
    )
    points = len(results)
    checks["depth_inefficiency_trend"] = MetricCheck(
        stderr=stderr,
        source="checkpoints",
        units=points,
        dof=max(points - 2, 0),
        preconditions=[family_members(results, ratio)],
        derived_from=[f"{ratio}_by_model"],
        note="weighted least-squares slope over the checkpoints; the larger of the weighted and residual "
        "errors, t(checkpoints - 2)",
    )
    parameters = max(r.scale.parameters or 0.0 for r in results)
    return deepest.model_copy(
        update={
            "models": [r.model for r in results],
            "num_layers_by_model": [r.num_layers for r in results],
            f"{ratio}_by_model": ratios,
            f"{share}_by_model": [r.late_half_kl_drop_fraction for r in results],
            f"{dependence}_by_model": [r.late_to_early_dependence_ratio for r in results],
            **bounds,
            "depth_inefficiency_trend": trend,
            "checks": checks,
            "layers_by_model": {r.model: r.layers for r in results},
            "artifacts": [name for r in results for name in r.artifacts],
            "provenance": {**deepest.provenance, "by_model": {r.model: r.provenance for r in results}},
            "notes": [
                f"family run over {len(results)} checkpoints; the single-model metrics and layers are those "
                f"of the deepest, {deepest.model} ({deepest.num_layers} layers)",
                *dict.fromkeys(n for r in results for n in r.notes),
            ],
            "scale": deepest.scale.model_copy(
                update={"parameters": parameters, "data": f"{deepest.scale.data}, {len(results)} checkpoints"}
            ),
        }
    )
